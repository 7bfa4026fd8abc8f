// swift-tools-version:6.1
// Courier's benchmarks: a separate package so that the peers measured here (AsyncHTTPClient, URLSession, raw
// Yams, SQLite through GRDB) never enter the library's dependency graph. Not built by CI; see README.md for the
// commands.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = ".."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "CourierBenchmarks",
    products: [
        // Courier alone (no AsyncHTTPClient, SwiftNIO or URLSession), so its peak RSS is Courier's own.
        .executable(name: "courier-load", targets: ["courier-load"]),
        // AsyncHTTPClient alone (no Courier or URLSession): the peer of courier-load's peak RSS.
        .executable(name: "ahc-load", targets: ["ahc-load"]),
        .executable(name: "http-bench", targets: ["http-bench"]),
        .executable(name: "policy-bench", targets: ["policy-bench"]),
        .executable(name: "cache-bench", targets: ["cache-bench"]),
        .executable(name: "loader-cache-bench", targets: ["loader-cache-bench"]),
        .executable(name: "collections-bench", targets: ["collections-bench"]),
        .executable(name: "tracer-bench", targets: ["tracer-bench"]),
        .executable(name: "instrument-ab", targets: ["instrument-ab"]),
    ],
    dependencies: [
        .package(path: courierPath),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        // SQLite as a key-value table, the peer of CourierCache's record store (cache-bench). Benchmarks only.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        // The hand-written Deque and TimerHeap Courier had, against swift-collections' (collections-bench).
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // The closed loop and its JSON line, shared by both load generators; no Foundation.
        .target(name: "BenchSupport"),
        .target(
            name: "CourierBench",
            dependencies: [
                "BenchSupport", .product(name: "CourierKit", package: courier),
                // The in-memory backends of `courier-load --client loader` with COURIER_INSTRUMENTS=memory.
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        // http-bench's AsyncHTTPClient client, apart so that ahc-load links AsyncHTTPClient without Courier.
        .target(
            name: "AHCBench",
            dependencies: ["BenchSupport", .product(name: "AsyncHTTPClient", package: "async-http-client")]
        ),
        .executableTarget(name: "http-bench", dependencies: ["BenchSupport", "CourierBench", "AHCBench"]),
        .executableTarget(name: "ahc-load", dependencies: ["BenchSupport", "AHCBench"]),
        .executableTarget(name: "courier-load", dependencies: ["BenchSupport", "CourierBench"]),
        // The instruments' cost, configuration against configuration inside one process.
        .executableTarget(
            name: "instrument-ab",
            dependencies: [
                "BenchSupport", "CourierBench", .product(name: "CourierKit", package: courier),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(
            name: "policy-bench",
            dependencies: [
                .product(name: "CourierKit", package: courier),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(name: "loader-cache-bench", dependencies: [.product(name: "CourierKit", package: courier)]),
        .executableTarget(
            name: "cache-bench",
            dependencies: [
                .product(name: "CourierCache", package: courier),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // What a tracer's own calls cost for the spans of one load, with no loader around them.
        .executableTarget(
            name: "tracer-bench",
            dependencies: [
                "BenchSupport", "CourierBench", .product(name: "CourierKit", package: courier),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(
            name: "collections-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
    ]
)
