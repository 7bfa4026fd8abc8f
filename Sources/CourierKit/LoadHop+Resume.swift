internal import CourierCore
internal import CourierTransport

extension LoadHop {
    /// The next attempts ask for `range` (the rest of a body that broke off), or for the whole body again (nil).
    mutating func askFor(_ range: ResumeRange?) {
        headers.remove(name: "Range")
        headers.remove(name: "If-Range")
        for field in range?.fields ?? [] { headers.add(name: field.name, value: field.value) }
    }

    /// Delivers `answer`'s body (a `206`) to the stream's consumer as the rest of `head`'s, which broke off after
    /// `from` bytes (`reason`): the consumer gets a `resuming` event and the bytes, never a head of the `206`'s, and
    /// the final response is `head`'s. The resumed body is never stored in the cache.
    @inline(never)
    nonisolated(nonsending) mutating func continueBody(
        _ answer: LoadAnswer, head: LoadAnswer, from: Int64, reason: String, _ counters: inout RequestExecution.Counters
    ) async throws(CourierError) -> Response {
        guard let events = execution.events else {
            counters.count(answer.abandon())
            throw CourierError(.protocol, "a body was resumed without a stream to continue (an internal fault)", url: requestURL)
        }
        // The answer is the first response's, whose body the consumer now has whole.
        counters.status = head.exchange.status
        bodyDelivered = 0
        let resuming = LoadEvent.resuming(attempt: machine.attempt, from: from, reason: reason)
        let (final, _) = try await events.deliver(
            service.client.streaming(answer.exchange), attempt: machine.attempt, keeping: nil, continuing: resuming,
            delivered: &bodyDelivered
        ).get()
        counters.count(final)
        return response(head.exchange.head, body: [], url: head.exchange.url, counters)
    }
}
