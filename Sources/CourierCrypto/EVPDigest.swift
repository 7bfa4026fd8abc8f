internal import CCourierOpenSSL

/// An incremental libcrypto digest (`EVP_MD_CTX`) with value semantics: a copy hashes on independently (the
/// context is copied on the first write after a copy), and finalizing leaves the value usable.
struct EVPDigest: @unchecked Sendable {
    // @unchecked: the context is written only through a uniquely referenced box (copy on write); shared boxes are
    // only read (copied from), which libcrypto allows from several threads.
    private final class Box {
        let context: OpaquePointer

        init(context: OpaquePointer) { self.context = context }

        deinit { EVP_MD_CTX_free(context) }

        func copy() -> Box {
            let context = EVP_MD_CTX_new()!
            precondition(EVP_MD_CTX_copy_ex(context, self.context) == 1, "EVP_MD_CTX_copy_ex failed")
            return Box(context: context)
        }
    }

    private var box: Box

    /// `algorithm` is libcrypto's `EVP_sha1()`, `EVP_sha256()` or `EVP_sha512()`.
    init(_ algorithm: OpaquePointer) {
        let context = EVP_MD_CTX_new()!
        precondition(EVP_DigestInit_ex(context, algorithm, nil) == 1, "EVP_DigestInit_ex failed")
        box = Box(context: context)
    }

    mutating func update(_ bytes: some Collection<UInt8>) {
        if !isKnownUniquelyReferenced(&box) { box = box.copy() }
        let context = box.context
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            precondition(EVP_DigestUpdate(context, buffer.baseAddress, buffer.count) == 1, "EVP_DigestUpdate failed")
        }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBufferPointer { buffer in
                precondition(EVP_DigestUpdate(context, buffer.baseAddress, buffer.count) == 1, "EVP_DigestUpdate failed")
            }
        }
    }

    /// The digest of everything added so far (the value can go on being updated).
    func finalize() -> [UInt8] {
        let finished = box.copy()
        let size = Int(EVP_MD_get_size(EVP_MD_CTX_get0_md(finished.context)))
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var length: UInt32 = 0
            precondition(EVP_DigestFinal_ex(finished.context, buffer.baseAddress, &length) == 1, "EVP_DigestFinal_ex failed")
            initialized = Int(length)
        }
    }
}
