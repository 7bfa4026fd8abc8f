internal import CourierCore

/// Notes what a request head's fields say while its field section is read: the framing fields, as a response's
/// (``ResponseFraming``), and the number of `Host` fields. A server must refuse obs-fold in a request (RFC 9112
/// §5.2) rather than unfold it, so a fold is an error here.
struct RequestHeadObserver: FieldSectionReader.Observer {
    private(set) var framing = ResponseFraming.Observer()
    private(set) var hostCount = 0

    mutating func fieldAdded(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> ResponseParseError.Reason? {
        if name.count == 4, equalsLowercase(name, 0, "host") { hostCount += 1 }
        return framing.fieldAdded(name: name, value: value)
    }

    func lastFieldContinued(with continuation: UnsafeBufferPointer<UInt8>, in fields: HTTPHeaders) -> ResponseParseError.Reason? {
        .obsoleteLineFolding
    }
}
