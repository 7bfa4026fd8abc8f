// CourierKit is the public façade: one import gives an app the policy graph vocabulary and the compiler.
// The loader types (service, factory, loader) arrive with the data-loader issue.
@_exported import CourierCore
@_exported import CourierPolicy
