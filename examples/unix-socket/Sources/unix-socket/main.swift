// unix-socket SOCKET_PATH
//
// Queries a local daemon's HTTP API over its Unix domain socket, as one would Docker's (/run/docker.sock): the
// policy's service `docker` claims the host `docker` and says `connect-to: unix:SOCKET_PATH`, so
// `http://docker/v1.43/info` goes over the socket with `Host: docker`, under the service's timeouts, rate limit
// and retries like any other request. Then the same daemon once more with AsyncHTTPClient's URL form,
// `http+unix://%2Fpath%2Fto.sock/...`, on a bare HTTPClient.
import CourierCore
import CourierKit
import CourierTransport
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 2, arguments[1].hasPrefix("/") else {
    FileHandle.standardError.write(Data("usage: unix-socket SOCKET_PATH (an absolute path, e.g. /run/docker.sock)\n".utf8))
    exit(2)
}
let socket = arguments[1]

// 1. The policy: one service for the daemon, reached over its socket. A daemon that is busy (503) is asked again.
let policy = """
    version: 1
    services:
      docker:
        hosts: [docker]
        scheme: http
        connect-to: "unix:\(socket)"
        timeouts: { connect: 2s, total: 10s }
        rate-limit: { requests-per-second: 20 }
        retry: { max-attempts: 3, on: [connect-error, 503], backoff: { initial: 50ms, jitter: none } }
    """
let path = NSTemporaryDirectory() + "courier-unix-socket-example-\(getpid()).yaml"
try policy.write(toFile: path, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(atPath: path) }
let service = try DataLoaderService(policyFile: path, configuration: .init(userAgent: "unix-socket-example/1.0"))
let loader = service.makeFactory().makeLoader()

// 2. Two of Docker's endpoints, decoded into what this program needs of them.
struct Version: Decodable {
    let Version: String
    let ApiVersion: String
}
struct Info: Decodable {
    let Name: String
    let Containers: Int
    let Images: Int
}

do {
    let version = try await loader.load(Request(url: "http://docker/v1.43/version"))
    let v = try JSONDecoder().decode(Version.self, from: Data(version.body))
    print("docker \(v.Version) (API \(v.ApiVersion)) at \(socket)")
    let info = try await loader.load(Request(url: "http://docker/v1.43/info"))
    let i = try JSONDecoder().decode(Info.self, from: Data(info.body))
    print("\(i.Name): \(i.Containers) containers, \(i.Images) images (\(info.attempts) attempt\(info.attempts == 1 ? "" : "s"))")
} catch let error as CourierError {
    FileHandle.standardError.write(Data("unix-socket: \(error)\n".utf8))
    exit(1)
}

// 3. The URL form that names the socket itself: `Host` is then `localhost`.
let client = HTTPClient()
defer { client.shutdown() }
let encoded = socket.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
guard let ping = HTTPRequest(unixSocketURL: "http+unix://\(encoded)/_ping") else {
    FileHandle.standardError.write(Data("unix-socket: cannot make an http+unix URL of \(socket)\n".utf8))
    exit(1)
}
let pong = try await client.execute(ping)
print("_ping over \(ping.url): \(pong.status) \(String(decoding: pong.body, as: UTF8.self))")
