@testable import CourierKit

/// The machine's traces compare an event's actions with a literal; the machine itself builds them one by one (a
/// literal would allocate an array), so only the tests have this conformance.
extension LoadActions: @retroactive ExpressibleByArrayLiteral {
    init(arrayLiteral actions: Action...) {
        self.init()
        for action in actions { append(action) }
    }
}
