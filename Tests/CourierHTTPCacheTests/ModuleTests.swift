import Testing

@testable import CourierHTTPCache

/// Placeholder removed once the module's first tests land.
@Suite struct ModuleTests {}
