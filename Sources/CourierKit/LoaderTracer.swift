import CourierCore

/// Sends one request's ``LoaderEvent``s to the trace observers that were registered when it started; costs
/// nothing when there are none.
struct LoaderTracer: Sendable {
    let request: UInt64
    let url: String
    private let observers: [@Sendable (LoaderEvent) -> Void]

    init(request: UInt64, url: String, observers: [@Sendable (LoaderEvent) -> Void]) {
        self.request = request
        self.url = url
        self.observers = observers
    }

    func callAsFunction(_ attempt: Int, _ kind: @autoclosure () -> LoaderEvent.Kind) {
        guard !observers.isEmpty else { return }
        let event = LoaderEvent(request: request, url: url, attempt: attempt, at: .now, kind: kind())
        for observer in observers { observer(event) }
    }
}
