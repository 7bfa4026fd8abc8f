internal import CourierCore

/// One attempt's bytes of a ``MultipartFormData``, chunk by chunk: each part's preamble, its content (files read as
/// they are sent, streams as they produce), and the closing delimiter. Files and streams are checked for the
/// boundary as they pass (with the tail of the previous chunk, so one split across two chunks is found too), and a
/// file must give exactly the size it had when it was appended.
///
/// `@unchecked Sendable`: its one user is `AsyncThrowingStream(unfolding:)`, which calls ``next()`` once at a time,
/// each call after the previous one returned, so its state is never touched by two threads at once (the
/// transport's `HTTP1Connection` is confined the same way).
final class MultipartProducer: @unchecked Sendable {
    private enum Step {
        case preamble(Int)
        case content(Int)
        case closing
        case done
    }

    private let parts: [MultipartFormData.Part]
    private let boundary: String
    private var step = Step.preamble(0)
    private var file: FileChunkReader?
    private var stream: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator?
    /// Bytes of the current part's content so far, and the tail kept for the boundary check.
    private var read = 0
    private var tail: [UInt8] = []

    init(parts: [MultipartFormData.Part], boundary: String) {
        self.parts = parts
        self.boundary = boundary
    }

    /// The next chunk, or nil at the end of the body.
    func next() async throws -> [UInt8]? {
        while true {
            switch step {
            case .done:
                return nil
            case .closing:
                step = .done
                return MultipartEncoding.closing(boundary: boundary)
            case .preamble(let index):
                guard index < parts.count else {
                    step = .closing
                    continue
                }
                step = .content(index)
                (read, tail, file, stream) = (0, [], nil, nil)
                switch parts[index].content {
                case .bytes: break
                case .file(let path, _): file = FileChunkReader(path: path)
                case .stream(let body): stream = body.makeStream().makeAsyncIterator()
                }
                // The part before this one ends with CRLF before the next boundary line.
                return (index == 0 ? [] : [13, 10]) + MultipartEncoding.preamble(parts[index], boundary: boundary)
            case .content(let index):
                if let chunk = try await contentChunk(parts[index]) { return chunk }
                (file, stream) = (nil, nil)
                step = index + 1 == parts.count ? .closing : .preamble(index + 1)
                if index + 1 == parts.count { return [13, 10] }
            }
        }
    }

    /// The next piece of `part`'s content, nil when it is over.
    private func contentChunk(_ part: MultipartFormData.Part) async throws -> [UInt8]? {
        let chunk: [UInt8]?
        switch part.content {
        case .bytes(let bytes):
            defer { read = bytes.count }
            return read == bytes.count || bytes.isEmpty ? nil : bytes
        case .file(let path, let size):
            do {
                chunk = try file?.next()
            } catch {
                throw MultipartError(.unreadableFile(path: path, reason: error.description))
            }
            read += chunk?.count ?? 0
            if read > size || (chunk == nil && read != size) { throw MultipartError(.fileChanged(path: path)) }
        case .stream:
            chunk = try await stream?.next()
        }
        guard let chunk else { return nil }
        // The chunk itself, and the seam with the previous one (its tail and this chunk's start): no copy of the
        // whole chunk per check.
        let keep = boundary.utf8.count + 2
        let seam = tail + chunk.prefix(keep)
        if MultipartEncoding.contains(chunk, boundary: boundary) || MultipartEncoding.contains(seam, boundary: boundary) {
            throw MultipartError(.boundaryInContent(part: part.name))
        }
        tail = Array((tail + chunk.suffix(keep)).suffix(keep))
        return chunk
    }
}
