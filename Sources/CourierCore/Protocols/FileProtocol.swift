#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// Answers `file:` URLs, read-only, from under one directory: `file:///srv/assets/logo.png` with
/// `FileProtocol(root: "/srv/assets")`.
///
/// Never registered by default: a URL from user input must not read the disk. Register it with the narrowest root
/// the app needs. A path is resolved (`..` and every symbolic link) and must stay under the root, checked both on
/// the path as written and on the resolved one, so neither `..` nor a link inside the root leads out of it; a path
/// outside is refused before the disk is asked whether it exists. The host must be empty or `localhost`.
///
/// - `GET` streams the file in 64 KiB chunks (a file of any size never sits in memory), with `Content-Length`,
///   `Content-Type` (from a small table of extensions, else `application/octet-stream`), `Last-Modified` and
///   `Accept-Ranges: bytes`. `HEAD` gives the same head with no body; other methods get `405`.
/// - `Range: bytes=first-last`, `first-` and `-suffix` get `206` with `Content-Range`; a range past the end gets
///   `416` with `Content-Range: bytes */size`; several ranges are answered whole (`200`).
/// - A directory is an error (no listing), as is a missing file, a device or pipe, or one that cannot be opened:
///   ``ProtocolPluginError``, so the load fails with `protocol-plugin`.
///
/// Each chunk is read with a blocking `pread` on the task that asks for it: short for a local disk.
public struct FileProtocol: ProtocolPlugin {
    /// The directory URLs must stay under, as given.
    public let root: String
    /// Bytes per chunk of a streamed body.
    package var chunkSize = 64 * 1024

    /// Answers `file:` URLs naming files under `root` (an absolute path; `/` for the whole file system, which is
    /// what `courier fetch` uses).
    public init(root: String) {
        self.root = root
    }

    public var schemes: [String] { ["file"] }

    public func respond(to request: ProtocolRequest) async throws -> ProtocolResponse {
        guard let hasBody = ProtocolResponse.readOnly(request.method) else { return .methodNotAllowed }
        let path = try resolve(request.url)
        let fd: Int32
        do {
            fd = try SystemCall.blocking("open") { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) }
        } catch {
            throw ProtocolPluginError("cannot open \(path): \(error.errnoDescription)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            let directory = (info.st_mode & S_IFMT) == S_IFDIR
            _ = close(fd)
            throw ProtocolPluginError(directory ? "\(path) is a directory (file: URLs list none)" : "\(path) is not a regular file")
        }
        let size = Int(info.st_size)
        var headers: HTTPHeaders = [
            "Content-Type": Self.mediaType(of: path), "Accept-Ranges": "bytes",
            "Last-Modified": HTTPDate.format(Double(info.st_mtim.tv_sec)),
        ]
        let status: Int
        let range: Range<Int>
        switch ByteRange(request.headers["range"], size: size) {
        case .whole:
            (status, range) = (200, 0..<size)
        case .partial(let part):
            (status, range) = (206, part)
            headers.add(name: "Content-Range", value: "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)")
        case .unsatisfiable:
            _ = close(fd)
            headers.add(name: "Content-Range", value: "bytes */\(size)")
            headers.add(name: "Content-Length", value: "0")
            return ProtocolResponse(status: 416, reason: "Range Not Satisfiable", headers: headers)
        }
        headers.add(name: "Content-Length", value: String(range.count))
        guard hasBody, !range.isEmpty else {
            _ = close(fd)
            return ProtocolResponse(status: status, reason: status == 200 ? "OK" : "Partial Content", headers: headers)
        }
        let reader = FileChunkReader(adopting: fd, range: range, path: path, chunkSize: chunkSize)
        let body = ProtocolBody(
            next: {
                do {
                    return try reader.next()
                } catch {
                    throw ProtocolPluginError("reading \(path) failed: \(error)")
                }
            },
            cancel: { reader.close() }
        )
        return ProtocolResponse(status: status, reason: status == 200 ? "OK" : "Partial Content", headers: headers, body: body)
    }

    /// The file `url` names, resolved, if it is under the root; else why not.
    package func resolve(_ url: HTTPURL) throws(ProtocolPluginError) -> String {
        guard url.hasAuthority else { throw ProtocolPluginError("a file: URL needs '//' and an absolute path") }
        guard url.host.isEmpty || url.host == "localhost" else {
            throw ProtocolPluginError("file: URLs name no other host than localhost, not '\(url.host)'")
        }
        guard let decoded = url.path.percentDecodedBytes, !decoded.contains(0) else {
            throw ProtocolPluginError("the file: URL's path has a bad '%' escape")
        }
        let root = Self.normalised(self.root)
        // The path as written, `..` removed, must be under the root before the disk is asked anything.
        let written = Self.normalised(String(decoding: decoded, as: UTF8.self))
        guard Self.isUnder(written, root: root) else { throw Self.outside(written) }
        guard let resolved = Self.realPath(written) else {
            throw ProtocolPluginError("no such file: \(written)")
        }
        // The root resolved too (it may be a link itself); the file's resolved path must be under it.
        guard let realRoot = Self.realPath(root), Self.isUnder(resolved, root: realRoot) else { throw Self.outside(written) }
        return resolved
    }

    private static func outside(_ path: String) -> ProtocolPluginError {
        ProtocolPluginError("\(path) is outside the directory file: URLs may read")
    }

    private static func isUnder(_ path: String, root: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }

    /// An absolute path with `.`, `..` and repeated slashes removed (lexically; links are realpath(3)'s job).
    package static func normalised(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                _ = parts.popLast()
            } else {
                parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `Content-Type` by extension, else `application/octet-stream`.
    package static func mediaType(of path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        return mediaTypes[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    private static let mediaTypes: [String: String] = [
        "txt": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "md": "text/markdown", "js": "text/javascript", "json": "application/json", "xml": "application/xml",
        "yaml": "application/yaml", "yml": "application/yaml", "pdf": "application/pdf", "zip": "application/zip",
        "gz": "application/gzip", "wasm": "application/wasm", "png": "image/png", "jpg": "image/jpeg",
        "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml", "ico": "image/x-icon",
        "mp3": "audio/mpeg", "wav": "audio/wav", "mp4": "video/mp4", "webm": "video/webm",
    ]
}
