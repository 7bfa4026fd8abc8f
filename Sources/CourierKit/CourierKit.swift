// CourierKit is the data loader: DataLoaderService -> DataLoaderFactory -> DataLoader, whose every request follows
// its route in the policy graph. It re-exports nothing: the vocabulary it speaks (HTTPHeaders, HTTPURL, CourierError,
// the policy graph's types, the authoriser plugin API) lives in CourierCore, which an app imports beside it, as an
// AsyncHTTPClient user imports NIOCore. docs/public-api.md lists which module holds what.
