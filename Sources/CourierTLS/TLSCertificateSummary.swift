internal import CCourierOpenSSL
internal import CourierCore
internal import CourierCrypto

/// What `courier fetch -v` shows of a certificate, as curl does: subject, issuer, validity and names.
public struct TLSCertificateSummary: Sendable, Hashable {
    /// The subject, one line (`/CN=localhost/O=...`).
    public package(set) var subject: String
    public package(set) var issuer: String
    /// Validity, ISO 8601 in UTC (`2026-11-25T06:00:00Z`).
    public package(set) var notBefore: String
    public package(set) var notAfter: String
    /// subjectAltName DNS names and IP addresses.
    public package(set) var names: [String]
    /// The pin of its key: `sha256/<base64>` of the SubjectPublicKeyInfo.
    public package(set) var pin: String
}

/// Reading facts out of an `X509*` (borrowed, never freed here).
enum X509Facts {
    static func summary(_ cert: OpaquePointer) -> TLSCertificateSummary {
        TLSCertificateSummary(
            subject: name(X509_get_subject_name(cert)), issuer: name(X509_get_issuer_name(cert)),
            notBefore: time(X509_get0_notBefore(cert)), notAfter: time(X509_get0_notAfter(cert)),
            names: subjectAltNames(cert), pin: pinText(cert)
        )
    }

    static func subject(_ cert: OpaquePointer) -> String { name(X509_get_subject_name(cert)) }

    static func name(_ name: OpaquePointer?) -> String {
        guard let name, let text = X509_NAME_oneline(name, nil, 0) else { return "?" }
        defer { ccourier_OPENSSL_free(text) }
        return String(cString: text)
    }

    /// An ASN1_TIME as ISO 8601 UTC.
    static func time(_ time: UnsafePointer<ASN1_TIME>?) -> String {
        guard let time else { return "?" }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return "?" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// DNS names as written, IP addresses in their usual text form.
    static func subjectAltNames(_ cert: OpaquePointer) -> [String] {
        final class Collected { var names: [String] = [] }
        let collected = Collected()
        withExtendedLifetime(collected) {
            ccourier_X509_visit_subject_alt_names(cert, Unmanaged.passUnretained(collected).toOpaque()) { context, type, bytes, length in
                guard let context, let bytes, length >= 0 else { return }
                let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
                let raw = Array(UnsafeBufferPointer(start: bytes, count: Int(length)))
                if type == GEN_DNS {
                    collected.names.append(String(decoding: raw, as: UTF8.self))
                } else if raw.count == 4 {
                    collected.names.append(raw.map(String.init).joined(separator: "."))
                } else if raw.count == 16 {
                    collected.names.append(X509Facts.ipv6Text(raw))
                }
            }
        }
        return collected.names
    }

    fileprivate static func ipv6Text(_ raw: [UInt8]) -> String {
        stride(from: 0, to: 16, by: 2).map { String(UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }

    /// SHA-256 of the DER SubjectPublicKeyInfo: what a pin names.
    static func spkiSHA256(_ cert: OpaquePointer) -> [UInt8]? {
        guard let key = X509_get_X509_PUBKEY(cert) else { return nil }
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_PUBKEY(key, &der)
        guard length > 0, let der else { return nil }
        defer { ccourier_OPENSSL_free(der) }
        return SHA256.hash(UnsafeBufferPointer(start: der, count: Int(length)))
    }

    static func pinText(_ cert: OpaquePointer) -> String {
        spkiSHA256(cert).map { TLSPolicy.Pin(sha256: $0).description } ?? "?"
    }
}
