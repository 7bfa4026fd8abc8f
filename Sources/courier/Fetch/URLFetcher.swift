internal import CourierCore

/// Fetches one URL of a `courier fetch` run: straight on the transport (``DirectFetcher``) or through a
/// policy's data loader (``LoaderFetcher``). One fetcher serves every URL of a run, several at a time with
/// `--parallel`.
protocol URLFetcher: Sendable {
    /// Fetches `url`, the `index`-th URL given (from 0), writing its head and body to `output`.
    func fetch(_ url: HTTPURL, index: Int, into output: BodyWriter) async -> FetchOutcome
}
