internal import CCourierOpenSSL

/// AES-256 in Galois/Counter Mode (NIST SP 800-38D) on libcrypto's EVP interface: authenticated encryption of
/// small records (the fleet's shared OAuth tokens at rest in Redis).
///
/// ``seal(_:associatedData:)`` draws a fresh random 96-bit nonce for every record (`RAND_bytes`) and writes
/// `version (1 byte, 1) | nonce (12) | ciphertext | tag (16)`; ``open(_:associatedData:)`` verifies the tag over the
/// ciphertext and the associated data before it returns anything, and throws ``AES256GCMError`` for a record that
/// was altered, cut short, sealed under another key or bound to other associated data. With random nonces one key
/// may seal about 2³² records before a nonce collision becomes a concern (SP 800-38D §8.3); a fleet's token records
/// are a handful a day.
///
/// The key is held in memory as given; ``description`` never shows it.
package struct AES256GCM: Sendable, CustomStringConvertible {
    package static let keySize = 32
    package static let nonceSize = 12
    package static let tagSize = 16
    /// The format byte written first.
    package static let version: UInt8 = 1
    /// Version, nonce and tag: what a record of empty plaintext takes.
    package static let overhead = 1 + nonceSize + tagSize

    private let key: [UInt8]

    /// - Throws: ``AES256GCMError/Kind-swift.enum/invalidKey`` unless `key` is exactly 32 bytes.
    package init(key: some Collection<UInt8>) throws(AES256GCMError) {
        guard key.count == Self.keySize else {
            throw AES256GCMError(.invalidKey, "an AES-256 key is \(Self.keySize) bytes, not \(key.count)")
        }
        self.key = Array(key)
    }

    /// `plaintext` encrypted and authenticated together with `associatedData` (which is not stored: `open` needs
    /// the same bytes again), under a fresh random nonce.
    package func seal(_ plaintext: [UInt8], associatedData: [UInt8]) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: Self.nonceSize)
        precondition(RAND_bytes(&nonce, Int32(Self.nonceSize)) == 1, "RAND_bytes failed")
        let (ciphertext, tag) = Self.encrypt(plaintext, key: key, nonce: nonce, associatedData: associatedData)
        return [Self.version] + nonce + ciphertext + tag
    }

    /// The plaintext of a record ``seal(_:associatedData:)`` made with this key and `associatedData`.
    package func open(_ sealed: [UInt8], associatedData: [UInt8]) throws(AES256GCMError) -> [UInt8] {
        guard sealed.count >= Self.overhead else {
            throw AES256GCMError(.truncated, "a sealed record is at least \(Self.overhead) bytes, not \(sealed.count)")
        }
        guard sealed[0] == Self.version else {
            throw AES256GCMError(.unknownVersion, "the record's format is \(sealed[0]), not \(Self.version)")
        }
        let nonce = Array(sealed[1...Self.nonceSize])
        let ciphertext = Array(sealed[(1 + Self.nonceSize)..<(sealed.count - Self.tagSize)])
        let tag = Array(sealed[(sealed.count - Self.tagSize)...])
        guard let plaintext = Self.decrypt(ciphertext, tag: tag, key: key, nonce: nonce, associatedData: associatedData) else {
            throw AES256GCMError(
                .authenticationFailed, "the record does not verify: altered, or sealed with another key or for another place"
            )
        }
        return plaintext
    }

    package var description: String { "AES256GCM(key: redacted)" }

    // MARK: - libcrypto

    /// One GCM encryption with a given nonce (the known-answer tests call it with the published nonces).
    static func encrypt(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) -> (ciphertext: [UInt8], tag: [UInt8]) {
        precondition(key.count == keySize && nonce.count == nonceSize)
        let context = EVP_CIPHER_CTX_new()!
        defer { EVP_CIPHER_CTX_free(context) }
        precondition(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1, "EVP_EncryptInit_ex failed")
        var length: Int32 = 0
        if !associatedData.isEmpty {
            precondition(EVP_EncryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1, "EVP_EncryptUpdate failed")
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written = 0
        if !plaintext.isEmpty {
            precondition(EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1, "EVP_EncryptUpdate failed")
            written = Int(length)
        }
        ciphertext.withUnsafeMutableBufferPointer { buffer in
            precondition(EVP_EncryptFinal_ex(context, buffer.baseAddress! + written, &length) == 1, "EVP_EncryptFinal_ex failed")
        }
        written += Int(length)
        var tag = [UInt8](repeating: 0, count: tagSize)
        precondition(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), &tag) == 1, "reading the GCM tag failed")
        return (Array(ciphertext[..<written]), tag)
    }

    /// One GCM decryption; nil when the tag does not verify.
    static func decrypt(_ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
        precondition(key.count == keySize && nonce.count == nonceSize && tag.count == tagSize)
        let context = EVP_CIPHER_CTX_new()!
        defer {
            EVP_CIPHER_CTX_free(context)
            // A failed verification may leave entries on the thread's error queue; TLS reads that queue.
            if ERR_peek_error() != 0 { ERR_clear_error() }
        }
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1 else { return nil }
        var length: Int32 = 0
        if !associatedData.isEmpty {
            guard EVP_DecryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else { return nil }
        }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written = 0
        if !ciphertext.isEmpty {
            guard EVP_DecryptUpdate(context, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1 else { return nil }
            written = Int(length)
        }
        var expected = tag
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &expected) == 1 else { return nil }
        let verified = plaintext.withUnsafeMutableBufferPointer { buffer in
            EVP_DecryptFinal_ex(context, buffer.baseAddress! + written, &length) == 1
        }
        guard verified else { return nil }
        written += Int(length)
        return Array(plaintext[..<written])
    }
}
