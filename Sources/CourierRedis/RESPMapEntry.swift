/// One key-value pair of a RESP3 map (``RESPValue/map(_:)``): keys may be any value, and the order is the server's.
package struct RESPMapEntry: Sendable, Equatable {
    package var key: RESPValue
    package var value: RESPValue

    package init(key: RESPValue, value: RESPValue) { (self.key, self.value) = (key, value) }
}
