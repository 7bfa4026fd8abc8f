public import CourierCore
internal import Synchronization

/// A `multipart/form-data` request body (RFC 7578): text fields, in-memory parts, files streamed from disk as they
/// are sent (a file of any size never sits in memory), and parts made by a stream of your own.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append("Holiday", name: "title")
/// try form.appendFile(at: "/tmp/beach.jpg", name: "photo", contentType: "image/jpeg")
/// let response = try await loader.load(Request(url: "https://photos.example.com/v1/upload", form: form))
/// ```
///
/// The boundary is random (128 bits) and checked against the content: against fields and in-memory parts when they
/// are appended, against files and streams as they are sent (an attempt whose content holds it fails, before the
/// server can see a part end early). The body is sent with `Content-Length` when every part's size is known (files
/// are measured when appended; a file whose size changed fails its attempt), chunked when a part is a stream of
/// unknown length. Each attempt (a retry, a 307 or 308 redirect) re-opens the files and sends the form from its start.
public struct MultipartFormData: Sendable {
    /// One part's content.
    enum Content: Sendable {
        case bytes([UInt8])
        case file(path: String, size: Int)
        case stream(RequestBodyStream)

        var size: Int? {
            switch self {
            case .bytes(let bytes): bytes.count
            case .file(_, let size): size
            case .stream(let stream): stream.length
            }
        }
    }

    struct Part: Sendable {
        let name: String
        let filename: String?
        let contentType: String?
        let content: Content
    }

    /// The boundary between parts (in ``contentType``).
    public let boundary: String
    private(set) var parts: [Part] = []

    /// An empty form with a random boundary.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let hex = (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.map { String(repeating: "0", count: 16 - $0.count) + $0 }
        self.boundary = "courier-" + hex.joined()
    }

    /// An empty form with `boundary` (1 to 70 characters of RFC 2046's set; tests use a fixed one).
    package init(boundary: String) {
        self.boundary = boundary
    }

    /// `multipart/form-data; boundary=…`: the request's `Content-Type`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The body's length in bytes, when every part's size is known; nil otherwise (the body is then chunked).
    public var length: Int? {
        var total = MultipartEncoding.closing(boundary: boundary).count
        for part in parts {
            guard let size = part.content.size else { return nil }
            total += MultipartEncoding.preamble(part, boundary: boundary).count + size + 2
        }
        return total
    }

    /// A text field.
    public mutating func append(_ value: String, name: String) {
        parts.append(Part(name: name, filename: nil, contentType: nil, content: .bytes(Array(value.utf8))))
    }

    /// A part of `bytes`, as a file named `filename` when one is given.
    public mutating func append(_ bytes: [UInt8], name: String, filename: String? = nil, contentType: String? = nil) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, content: .bytes(bytes)))
    }

    /// The regular file at `path`, read as it is sent; `filename` defaults to the path's last component and
    /// `contentType` to `application/octet-stream`.
    ///
    /// - Throws: ``MultipartError`` when the file cannot be measured (missing, unreadable, not a regular file).
    public mutating func appendFile(at path: String, name: String, filename: String? = nil, contentType: String? = nil) throws(MultipartError) {
        let size: Int
        do {
            size = try FileChunkReader.size(of: path)
        } catch {
            throw MultipartError(.unreadableFile(path: path, reason: error.description))
        }
        let shown = filename ?? String(path.split(separator: "/").last ?? Substring(path))
        parts.append(Part(name: name, filename: shown, contentType: contentType ?? "application/octet-stream", content: .file(path: path, size: size)))
    }

    /// A part made by `stream` (called once per attempt); its ``RequestBodyStream/length``, when known, keeps the
    /// form's length known.
    public mutating func append(_ stream: RequestBodyStream, name: String, filename: String? = nil, contentType: String? = nil) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, content: .stream(stream)))
    }

    /// The form as a request body: each call of its `makeStream` starts again, re-opening the files.
    ///
    /// - Throws: ``MultipartError`` when a field or in-memory part holds the boundary (with a random boundary this
    ///   does not happen by chance).
    public func bodyStream() throws(MultipartError) -> RequestBodyStream {
        for part in parts {
            if case .bytes(let bytes) = part.content, MultipartEncoding.contains(bytes, boundary: boundary) {
                throw MultipartError(.boundaryInContent(part: part.name))
            }
        }
        let (parts, boundary) = (self.parts, self.boundary)
        return RequestBodyStream(length: length) {
            let producer = MultipartProducer(parts: parts, boundary: boundary)
            return AsyncThrowingStream(unfolding: { try await producer.next() })
        }
    }
}

extension Request {
    /// A request that sends `form` (a `POST` unless `method` says otherwise), with its `Content-Type`.
    ///
    /// - Throws: ``MultipartError`` as ``MultipartFormData/bodyStream()`` does.
    public init(url: String, method: HTTPMethod = .post, headers: HTTPHeaders = HTTPHeaders(), form: MultipartFormData) throws(MultipartError) {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: form.contentType)
        self.init(url: url, method: method, headers: headers, bodyStream: try form.bodyStream())
    }
}
