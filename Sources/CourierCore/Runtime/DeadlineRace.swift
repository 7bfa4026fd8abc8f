/// Runs a piece of work that Courier does not control (an authoriser plugin's call, a protocol plugin's answer or
/// body chunk) against a time limit and the caller's cancellation, so that neither a slow plugin nor one that
/// ignores cancellation can hold a load past its deadline.
package enum DeadlineRace {
    /// Runs `operation` on a task of its own, outside the load's cancellation scope; the caller resumes with its
    /// result, after `timeout` with `timedOut`, or when the caller is cancelled with a `cancelled` error naming
    /// `url`, whichever comes first. The work and the timer left behind are cancelled. The timeout runs on `clock`
    /// (a manual clock counts it as a timer, not a sleeper: ``ManualClock/timers``).
    package static func run<T: Sendable>(
        timeout: Duration, timedOut: CourierError, url: String?, clock: LoaderClock = .system,
        _ operation: @escaping @Sendable () async throws(CourierError) -> T
    ) async throws(CourierError) -> T {
        let shot = OneShot<Result<T, CourierError>>()
        let work = Task {
            await CancellationScope.unscoped {
                do throws(CourierError) {
                    shot.resume(.success(try await operation()))
                } catch {
                    shot.resume(.failure(error))
                }
            }
        }
        let timer = Task {
            // Cancelled once the work answered (or the caller was cancelled, which resumed the shot already).
            guard (try? await clock.sleepAsTimeout(for: max(timeout, .zero))) != nil else { return }
            shot.resume(.failure(timedOut))
        }
        let result = await CancellationScope.withCancellationHandler {
            await shot.wait()
        } onCancel: {
            shot.resume(.failure(CourierError(.cancelled, "the request was cancelled", url: url)))
        }
        work.cancel()
        timer.cancel()
        return try result.get()
    }
}
