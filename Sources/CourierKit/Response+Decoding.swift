internal import CourierCore
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Response {
    /// The body decoded as `type` by `decoder` (a `JSONDecoder` unless you pass one), when the status is 2xx.
    ///
    /// ```swift
    /// let response = try await loader.load(Request(url: "https://api.example.com/v1/products/7"))
    /// let product = try response.decode(Product.self)
    /// ```
    ///
    /// - Throws: ``ResponseDecodingError``, with the status, the content type and the body's first bytes: reason
    ///   `status` for a status outside 2xx (decode an error body yourself with `decoder.decode(_:from:)` on
    ///   ``body``), `undecodable` when the decoder threw.
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: some ResponseDecoder = JSONDecoder()) throws(ResponseDecodingError) -> T {
        guard isSuccess else { throw decodingError(.status, type) }
        do {
            return try decoder.decode(type, from: body)
        } catch {
            throw decodingError(.undecodable(String(describing: error)), type)
        }
    }

    private func decodingError<T>(_ reason: ResponseDecodingError.Reason, _ type: T.Type) -> ResponseDecodingError {
        ResponseDecodingError(
            reason: reason, status: status, contentType: headers["Content-Type"],
            bodyPrefix: Array(body.prefix(ResponseDecodingError.prefixLimit)), bodyLength: body.count, url: url,
            type: String(describing: type)
        )
    }
}
