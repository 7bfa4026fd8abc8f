#if canImport(Glibc)
import Glibc
#endif

/// Minimal file helpers for the tests (real files in a fresh temporary directory).
struct FileIOError: Error { var call: String; var errno: Int32 }

func readBytes(_ path: String) throws -> [UInt8] {
    guard let f = fopen(path, "rb") else { throw FileIOError(call: "fopen", errno: errno) }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n == 0 { break }
        out += buffer[0..<n]
    }
    return out
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    guard let f = fopen(path, "wb") else { throw FileIOError(call: "fopen", errno: errno) }
    defer { fclose(f) }
    guard fwrite(bytes, 1, bytes.count, f) == bytes.count else { throw FileIOError(call: "fwrite", errno: errno) }
}

func writeFile(_ path: String, _ text: String) throws { try writeFile(path, Array(text.utf8)) }

/// A new empty directory under /tmp.
func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/courier-policy-XXXXXX".utf8CString)
    guard mkdtemp(&template) != nil else { throw FileIOError(call: "mkdtemp", errno: errno) }
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func makeDirectory(_ path: String) throws {
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw FileIOError(call: "mkdir", errno: errno) }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
