internal import ArgumentParser
internal import CourierCore
internal import Foundation

/// `courier fetch`'s proxy options, curl's: `-x/--proxy`, `-U/--proxy-user`, `--noproxy`, `--proxy-cacert`.
struct ProxyOptions: ParsableArguments {
    @Option(
        name: [.customShort("x"), .customLong("proxy")],
        help: ArgumentHelp(
            "Go through this proxy: [http|https|socks5|socks5h://][user:password@]host[:port] (port 1080 by default, 443 for https://). Wins over the policy's proxy: and https_proxy/http_proxy/all_proxy; \"\" ignores the environment's (and without --policy goes direct).",
            valueName: "url"
        )
    )
    var proxy: String?

    @Option(
        name: [.customShort("U"), .customLong("proxy-user")],
        help: ArgumentHelp("The proxy's user and password (over any in the -x URL).", valueName: "user:password")
    )
    var proxyUser: String?

    @Option(
        help: ArgumentHelp(
            "Hosts to reach directly, comma-separated: names (and the names under them), addresses, CIDR ranges, host:port, or *. Replaces no_proxy.",
            valueName: "list"
        )
    )
    var noproxy: String?

    @Option(
        name: .customLong("proxy-cacert"),
        help: ArgumentHelp("Verify an https:// proxy's own certificate with the CAs in this PEM file.", valueName: "file")
    )
    var proxyCACert: String?

    func validate() throws {
        if let proxy, !proxy.isEmpty {
            do {
                _ = try ProxyServer.parse(proxy)
            } catch {
                throw ValidationError("-x: \(error)")
            }
        }
        if let proxyUser, !proxyUser.contains(":") {
            throw ValidationError("-U takes user:password")
        }
        if let proxyCACert, !FileManager.default.isReadableFile(atPath: proxyCACert) {
            throw ValidationError("--proxy-cacert: cannot read '\(proxyCACert)'")
        }
    }

    /// The `-x` proxy with `-U`'s credentials and `--proxy-cacert`; nil without `-x` or with `-x ""`.
    var server: ProxyServer? {
        guard let proxy, !proxy.isEmpty, var server = try? ProxyServer.parse(proxy) else { return nil }
        if let proxyUser, let colon = proxyUser.firstIndex(of: ":") {
            server.username = String(proxyUser[..<colon])
            server.password = String(proxyUser[proxyUser.index(after: colon)...])
        }
        server.caFile = proxyCACert.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
        return server
    }

    /// The selection a request without a policy makes: `-x` (or `-x ""`), `--noproxy`, then `environment`.
    func selection(environment: [String: String]) -> ProxySelection {
        var explicit: ProxySelection.Choice?
        if let proxy { explicit = proxy.isEmpty ? .direct : server.map { .through($0, except: NoProxyList("")) } }
        return ProxySelection(explicit: explicit, explicitNoProxy: noproxy.map { NoProxyList($0) }, environment: environment)
    }
}
