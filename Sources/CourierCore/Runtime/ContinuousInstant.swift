/// An instant of `ContinuousClock`, held as the `Duration` since a process-wide origin: a fixed-size twin of
/// `ContinuousClock.Instant` for the values a load keeps and passes around on every request.
///
/// `ContinuousClock.Instant` is not `@frozen` in the standard library, so outside it an instant's size is known
/// only at run time. Every struct, enum, array and local that holds one is then copied, destroyed and tested
/// through value-witness calls, an enum with such a payload goes through the runtime's generic multi-payload
/// functions, and in an async function each such local is allocated from the task's allocator. A load's state
/// machine and its actions, its loop's locals and a `Response` (through its timeline) all held instants, and
/// that handling was a measurable part of a load's CPU (issue 11, session 15). This type is a plain `Duration`;
/// the conversions happen at the edges, where an instant goes to or comes from an API that takes one.
package struct ContinuousInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Since ``origin``.
    package var offset: Duration

    /// The process-wide origin, read once.
    private static let origin = ContinuousClock.now

    /// `instant`, held as its offset from the origin.
    package init(_ instant: ContinuousClock.Instant) {
        offset = instant - Self.origin
    }

    private init(offset: Duration) {
        self.offset = offset
    }

    /// The current instant of `ContinuousClock`.
    package static var now: ContinuousInstant { ContinuousInstant(.now) }

    /// The same instant as a `ContinuousClock.Instant`.
    package var instant: ContinuousClock.Instant { Self.origin + offset }

    package var description: String { "\(offset) since the process's first instant" }

    package static func < (lhs: ContinuousInstant, rhs: ContinuousInstant) -> Bool { lhs.offset < rhs.offset }

    package static func + (lhs: ContinuousInstant, rhs: Duration) -> ContinuousInstant {
        ContinuousInstant(offset: lhs.offset + rhs)
    }

    package static func - (lhs: ContinuousInstant, rhs: Duration) -> ContinuousInstant {
        ContinuousInstant(offset: lhs.offset - rhs)
    }

    package static func - (lhs: ContinuousInstant, rhs: ContinuousInstant) -> Duration { lhs.offset - rhs.offset }

    package static func += (lhs: inout ContinuousInstant, rhs: Duration) { lhs.offset += rhs }
}
