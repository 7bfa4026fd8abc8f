@testable import CourierKit

/// The machine's traces compare an event's actions with a literal, or look at the last: the machine itself builds
/// them one by one (a literal would allocate an array), so only the tests have these.
extension LoadActions: ExpressibleByArrayLiteral {
    init(arrayLiteral actions: Action...) {
        self.init()
        for action in actions { append(action) }
    }

    var last: Action? { elements.last }
}
