internal import CourierCore

/// The URLs `courier fetch` takes: http(s), `http+unix://`, and, as curl, `data:` and `file://`.
enum FetchURL {
    /// `data:` (RFC 2397) and `file:` (read-only, under `/`: the person at the terminal can read the files anyway;
    /// the library never registers `file:` by default).
    static let protocols = ProtocolRegistry.standard.registering(FileProtocol(root: "/"))

    /// The URL `text` names, if `courier fetch` can fetch it.
    static func parse(_ text: String) -> HTTPURL? {
        if let url = HTTPURL(text) ?? UnixSocketURL.parse(text)?.url { return url }
        guard let url = HTTPURL(anyScheme: text), url.scheme == "data" || url.scheme == "file" else { return nil }
        return url
    }
}
