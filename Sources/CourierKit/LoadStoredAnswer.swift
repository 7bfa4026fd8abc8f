/// How a stored response answers.
enum LoadStoredAnswer: Equatable {
    case hit
    case stale(CacheEvent.StaleReason)
    case revalidated
}
