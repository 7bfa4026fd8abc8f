import CourierKit
import CourierServiceLifecycle
import CourierTestSupport
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import CourierCore
import CourierPolicy
import CourierTransport

/// `CourierService` in a real `ServiceGroup`: a graceful shutdown of the group shuts Courier down.
@Suite(.timeLimit(.minutes(1))) struct CourierServiceTests {
    /// A service of the app's own that runs until the group's graceful shutdown, and says when it started.
    struct AppService: Service {
        let started: AsyncStream<Void>.Continuation
        func run() async throws {
            started.yield()
            try? await gracefulShutdown()
        }
    }

    static func makeService() throws -> DataLoaderService {
        let compilation = PolicyCompiler().compile(source: "version: 1\n", path: "inline.yaml")
        let graph = try #require(compilation.graph)
        var configuration = DataLoaderService.Configuration(userAgent: "courier-tests/1")
        configuration.environment = [:]
        return DataLoaderService(graph: graph, configuration: configuration)
    }

    @Test func aGracefulShutdownOfTheGroupShutsTheDataLoaderServiceDown() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let service = try Self.makeService()
        let loader = service.makeFactory().makeLoader()
        #expect(try await loader.load(Request(url: peer.url("/bytes/10"))).body.count == 10)

        let started = AsyncStream<Void>.makeStream()
        let courier = CourierService(service, gracePeriod: .seconds(5))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [courier, AppService(started: started.continuation)], logger: Logger(label: "courier-tests")
            )
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = started.stream.makeAsyncIterator()
            _ = await iterator.next()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }

        #expect(courier.isFinished)
        #expect(service.isShutDown)
        do {
            _ = try await loader.load(Request(url: peer.url("/bytes/10")))
            Issue.record("a load after the group's shutdown succeeded")
        } catch {
            #expect(error.kind == .shutdown)
        }
    }

    @Test func aGracefulShutdownOfTheGroupShutsAnHTTPClientDown() async throws {
        let client = try HTTPClient(eventLoopThreads: 1)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [CourierService(client)], logger: Logger(label: "courier-tests"))
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(client.isShutDown)
    }
}
