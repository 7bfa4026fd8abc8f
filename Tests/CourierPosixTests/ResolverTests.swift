import CourierCore
import Glibc
import Synchronization
import Testing

@testable import CourierPosix

extension LoopbackTests {
    @Suite struct ResolverTests {
        @Test func literalsNeedNoLookup() async throws {
            let resolver = Resolver(maxThreads: 1) { host, _ throws(ResolveError) in
                throw ResolveError(code: -2, message: "lookup must not run", host: host)
            }
            #expect(try await resolver.resolve(host: "127.0.0.1", port: 80) == [SocketAddress(ipAddress: "127.0.0.1", port: 80)!])
            #expect(try await resolver.resolve(host: "[::1]", port: 443) == [SocketAddress(ipAddress: "::1", port: 443)!])
        }

        @Test func resolvesLocalhostWithGetaddrinfo() async throws {
            let addresses = try await Resolver.shared.resolve(host: "localhost", port: 8080)
            #expect(addresses.contains(SocketAddress(ipAddress: "127.0.0.1", port: 8080)!))
            #expect(addresses.allSatisfy { $0.port == 8080 })
            #expect(Set(addresses).count == addresses.count)
        }

        @Test func badInputGetsATypedError() async throws {
            for host in ["", "a\0b", String(repeating: "a", count: 300)] {
                let error = await #expect(throws: ResolveError.self) { _ = try await Resolver.shared.resolve(host: host, port: 80) }
                #expect(error?.host == host)
            }
            let port = await #expect(throws: ResolveError.self) { _ = try await Resolver.shared.resolve(host: "localhost", port: 70000) }
            #expect(port?.code == EAI_SERVICE)
        }

        @Test func lookupErrorsAreTyped() async throws {
            let resolver = Resolver(maxThreads: 1) { host, _ throws(ResolveError) in
                throw ResolveError(getaddrinfoCode: EAI_NONAME, errno: 0, host: host)
            }
            let error = await #expect(throws: ResolveError.self) { _ = try await resolver.resolve(host: "nope.invalid", port: 80) }
            #expect(error?.isNameNotFound == true)
            #expect(error?.host == "nope.invalid")
        }

        @Test func cancellationResumesWhileTheLookupStillRuns() async throws {
            let release = Atomic(false)
            let finished = Atomic(false)
            let resolver = Resolver(maxThreads: 1) { _, port throws(ResolveError) in
                // A lookup that hangs until the test lets it go (bounded at 5 s).
                for _ in 0..<1000 where !release.load(ordering: .acquiring) { usleep(5000) }
                finished.store(true, ordering: .releasing)
                return [SocketAddress(ipAddress: "192.0.2.1", port: port)!]
            }
            let lookup = Task { try await resolver.resolve(host: "slow.example", port: 80) }
            try await Task.sleep(for: .milliseconds(50))
            let start = Deadline.now()
            lookup.cancel()
            let result = await lookup.result
            #expect(Deadline.now() - start < .milliseconds(500))
            #expect(throws: CancellationError.self) { try result.get() }
            let lookupFinished = finished.load(ordering: .acquiring)
            #expect(!lookupFinished)
            release.store(true, ordering: .releasing)
            // The pool is still usable afterwards.
            #expect(try await resolver.resolve(host: "next.example", port: 81).first?.port == 81)
        }

        @Test func manyConcurrentLookupsShareABoundedPool() async throws {
            let running = Atomic(0)
            let peak = Atomic(0)
            let resolver = Resolver(maxThreads: 2) { _, port throws(ResolveError) in
                let now = running.wrappingAdd(1, ordering: .relaxed).newValue
                var current = peak.load(ordering: .relaxed)
                while now > current {
                    let (exchanged, original) = peak.compareExchange(expected: current, desired: now, ordering: .relaxed)
                    if exchanged { break }
                    current = original
                }
                usleep(10_000)
                running.wrappingSubtract(1, ordering: .relaxed)
                return [SocketAddress(ipAddress: "192.0.2.1", port: port)!]
            }
            try await withThrowingTaskGroup(of: Int.self) { group in
                for port in 1...10 { group.addTask { try await resolver.resolve(host: "h\(port).example", port: port)[0].port } }
                var ports: [Int] = []
                for try await port in group { ports.append(port) }
                #expect(ports.sorted() == Array(1...10))
            }
            let maximum = peak.load(ordering: .relaxed)
            #expect(maximum <= 2)
        }
    }
}
