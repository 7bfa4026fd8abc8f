import CourierCore
import Testing

@testable import CourierHTTPCache

/// Conditional requests from a stored response's validators (RFC 9111 §4.3.1; RFC 9110 §13.1).
@Suite struct ValidatorsTests {
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"

    @Test(arguments: [
        (["ETag": #""abc""#], #""abc""#, nil),
        (["ETag": #"W/"abc""#], #"W/"abc""#, nil),
        (["Last-Modified": date], nil, date),
        (["ETag": #""x""#, "Last-Modified": date], #""x""#, date),
        (["Date": date], nil, nil),  // §4.3.1: Date is not used in place of Last-Modified
        (["Last-Modified": "yesterday"], nil, nil),  // not an HTTP-date: not sent
        (["ETag": "  "], nil, nil),
        ([:], nil, nil),
    ] as [(HTTPHeaders, String?, String?)])
    func conditionalHeaders(stored: HTTPHeaders, ifNoneMatch: String?, ifModifiedSince: String?) {
        let validators = Validators(storedHeaders: stored)
        let request = validators.conditionalHeaders(["Accept": "*/*", "If-None-Match": #""stale-client-tag""#])
        #expect(request["Accept"] == "*/*")
        #expect(request["If-Modified-Since"] == ifModifiedSince)
        #expect(validators.isEmpty == (ifNoneMatch == nil && ifModifiedSince == nil))
        if let ifNoneMatch {
            #expect(request.values(for: "If-None-Match") == [ifNoneMatch])
        } else {
            #expect(request["If-None-Match"] == #""stale-client-tag""#, "left as the request had it")
        }
    }
}
