// CourierKit is the public façade: one import gives an app the vocabulary, the policy compiler and the HTTP
// client. The data loader (service, factory, loader) arrives with the data-loader issue.
@_exported import CourierCore
@_exported import CourierPolicy
@_exported import CourierTransport
@_exported import CourierHTTP1
@_exported import CourierAuthorisers
