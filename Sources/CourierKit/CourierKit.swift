// CourierKit is the public façade: one import gives an app the vocabulary, the policy compiler, the HTTP
// client, the authoriser plugins, the record store and the data loader (DataLoaderService -> DataLoaderFactory -> DataLoader),
// whose every request follows its route in the policy graph.
@_exported import CourierCore
@_exported import CourierPolicy
@_exported import CourierTransport
@_exported import CourierTLS
@_exported import CourierHTTP1
@_exported import CourierAuthorisers
@_exported import CourierCache
@_exported import CourierHTTPCache
