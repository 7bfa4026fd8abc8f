internal import CCourierOpenSSL

/// OpenSSL's per-thread error queue.
enum OpenSSLErrorQueue {
    /// Empties the queue and returns its entries as text, oldest first, with the reason code of the newest.
    static func drain() -> (texts: [String], lastReason: Int32?) {
        var texts: [String] = []
        var lastReason: Int32?
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            texts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            lastReason = ERR_GET_REASON(code)
        }
        return (texts, lastReason)
    }

    /// Forgets whatever an earlier call left behind, so the next failure reports only its own errors.
    static func clear() { ERR_clear_error() }
}
