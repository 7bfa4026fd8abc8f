// swift-tools-version:6.1
// Courier: an HTTP data-loading framework for Swift on Linux.
//
// Layers, lowest first (a module never imports one above it or beside it):
//   C shims          CCourierPosix, CCourierZlib, CCourierChecksum, CCourierOpenSSL (the system's libssl/libcrypto),
//                    CCourierYAML (the system's libyaml)
//   foundations      CourierCore (the vocabulary: no C library but libc), CourierCrypto (libcrypto's SHA-2, HMAC and SHA-1)
//   each on its own  CourierPolicy (libyaml), CourierHTTP1, CourierPosix, CourierTLS, CourierCache
//   composed         CourierLint, CourierTransport, CourierHTTPCache
//   coordination     CourierRedis (a Redis client of Courier's own), CourierCoordination (the fleet's shared limits,
//                    pauses and tokens over it: issue 24)
//   façade           CourierKit
//   adapters         CourierServiceLifecycle (its own product: only its users depend on swift-service-lifecycle),
//                    CourierOpenAPI (likewise for swift-openapi-runtime)
//   test kit         CourierTesting (its own product: MockServer, on CourierPosix, CourierHTTP1 and CourierTLS, and
//                    ScriptedTransport, a protocol plugin installed in a CourierKit configuration; the main library
//                    does not depend on it)
//   tools            courier (executable), courier-policy-lint (the build-time lint plugin's tool), Plugins/
//   fuzzing          CourierFuzz (the libFuzzer targets' harnesses), courier-fuzz (executable), CCourierLibFuzzer
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Courier",
    products: [
        // No module re-exports another: an app imports the modules whose names it uses (docs/public-api.md). The
        // product lists every module with public declarations an app may need; the others (CourierHTTP1,
        // CourierHTTPCache, CourierPosix, CourierCrypto, CourierLint) have none, only `package` ones. The record store is a
        // product of its own (the loader's public API names none of its types), with the vocabulary module for the
        // one it does name, `WallClock` (a store's injected clock).
        .library(
            name: "CourierKit",
            targets: ["CourierKit", "CourierCore", "CourierPolicy", "CourierTransport", "CourierTLS", "CourierAuthorisers"]
        ),
        .library(name: "CourierCache", targets: ["CourierCache", "CourierCore"]),
        // swift-service-lifecycle support, a product of its own so that CourierKit does not depend on it.
        .library(name: "CourierServiceLifecycle", targets: ["CourierServiceLifecycle"]),
        // The test kit (issue 26), a product of its own so that an app's main target never links it; with the
        // vocabulary module, whose types (`HTTPHeaders`, `HTTPMethod`, `TLSPolicy`) its API names.
        .library(name: "CourierTesting", targets: ["CourierTesting", "CourierCore"]),
        // A swift-openapi-runtime ClientTransport over the data loader, a product of its own so that only its users
        // depend on swift-openapi-runtime (and swift-http-types).
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        .executable(name: "courier", targets: ["courier"]),
        .plugin(name: "LintPolicies", targets: ["LintPolicies"]),
        .plugin(name: "LintPoliciesOnBuild", targets: ["LintPoliciesOnBuild"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // 1.7 carries ServiceContextModule and InMemoryTracing itself.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Only the CourierOpenAPI product uses these two.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // `swift package generate-documentation` (DocC catalogs in Sources/*/*.docc); a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C shims
        .target(name: "CCourierPosix"),
        .systemLibrary(name: "CCourierZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // CRC-32 with carry-less multiplication, zlib for the rest (the record store's checksum).
        .target(name: "CCourierChecksum", dependencies: ["CCourierZlib"]),
        .systemLibrary(name: "CCourierOpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // The policy composer reads libyaml's event stream (Sources/CourierPolicy/Syntax/YAMLComposer.swift), so it
        // needs libyaml itself, not a YAML library's tree. Yams' public API cannot serve it: `Yams.compose` builds the
        // whole tree recursively before anything can be checked (a deeply nested hostile file overflows the stack
        // before the depth limit could apply), expands nothing lazily for the node budget, and throws on the first
        // mapping with a duplicate key, at the *first* key's mark, so every other diagnostic of the file is lost;
        // its event stream (`Parser.parse()`) is private. Importing Yams' own `CYaml` target instead reached past
        // its only product. So Courier links the system's libyaml (Debian/Ubuntu: libyaml-dev; 0.2.5 on bookworm and
        // jammy, whose messages the lint goldens hold) and no longer depends on Yams at all: one copy of libyaml per
        // binary, patched by the system's security updates. The cost: the fuzz build's sanitizers no longer cover
        // libyaml's C code (docs/fuzzing.md).
        .systemLibrary(name: "CCourierYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),

        // MARK: - Vocabulary
        // CCourierPosix for the one thread helper (`ThreadOfItsOwn`: pthread_setname_np is a GNU extension).
        .target(name: "CourierCore", dependencies: ["CCourierPosix"]),
        // SHA-256, SHA-512, HMAC (and SHA-1, which names Redis scripts) on libcrypto, out of the vocabulary so that
        // it links no OpenSSL. Its types are `package`: `SHA256` and `HMAC` are swift-crypto's names too, and an app
        // may import both libraries.
        // CourierKit publishes what apps and authoriser plugins need under a name of its own (`MessageDigest`).
        .target(name: "CourierCrypto", dependencies: ["CCourierOpenSSL"]),

        // MARK: - Policy compiler, codec, event loop (each on its own)
        .target(name: "CourierPolicy", dependencies: ["CourierCore", "CCourierYAML"]),
        .target(name: "CourierHTTP1", dependencies: ["CourierCore", "CCourierZlib"]),
        .target(
            name: "CourierPosix",
            dependencies: ["CourierCore", "CCourierPosix", .product(name: "HeapModule", package: "swift-collections")]
        ),
        .target(name: "CourierTLS", dependencies: ["CourierCore", "CourierCrypto", "CCourierOpenSSL"]),
        // The record store: no network code (docs/cache.md).
        .target(name: "CourierCache", dependencies: ["CourierCore", "CourierCrypto", "CCourierChecksum", "CCourierPosix"]),

        // MARK: - Composed layers
        .target(name: "CourierLint", dependencies: ["CourierCore", "CourierPolicy"]),
        .target(
            name: "CourierTransport",
            dependencies: [
                "CourierCore", "CourierHTTP1", "CourierPosix", "CourierTLS",
                .product(name: "Logging", package: "swift-log"), .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(name: "CourierHTTPCache", dependencies: ["CourierCore", "CourierHTTP1", "CourierCache"]),
        .target(name: "CourierAuthorisers", dependencies: ["CourierCore", "CourierCrypto"]),

        // MARK: - Coordination backends
        // A Redis client on Courier's own sockets and TLS: the RESP parser and the pipeline, reconnection and
        // breaker machines are pure; no HTTP module, so it sits beside none of the transport (docs/redis-client.md).
        // CourierCrypto for the scripts' SHA-1. In no product: everything is `package`.
        .target(
            name: "CourierRedis",
            dependencies: [
                "CourierCore", "CourierCrypto", "CourierPosix", "CourierTLS",
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),

        // The fleet's shared rate limits, Retry-After pauses, live instances and tokens, over CourierRedis.
        // In no product: everything is `package`.
        .target(
            name: "CourierCoordination",
            dependencies: ["CourierCore", "CourierCrypto", "CourierRedis"]
        ),

        // MARK: - Public façade
        .target(
            name: "CourierKit",
            dependencies: [
                "CourierCore", "CourierCrypto", "CourierPolicy", "CourierHTTP1", "CourierPosix", "CourierTLS",
                "CourierTransport", "CourierAuthorisers", "CourierCache", "CourierHTTPCache", "CourierRedis", "CourierCoordination",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),

        // MARK: - Ecosystem adapters (separate products)
        .target(
            name: "CourierServiceLifecycle",
            dependencies: [
                "CourierKit", "CourierTransport", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: - Test kit (its own product)
        // MockServer: a loopback HTTP/1.1 server on Courier's own sockets, request parser and (server-side) TLS,
        // with a CA made at run time through libcrypto.
        .target(
            name: "CourierTesting",
            dependencies: ["CourierCore", "CourierKit", "CourierHTTP1", "CourierPosix", "CourierTLS", "CCourierOpenSSL"]
        ),

        // Generated clients (issue 26): swift-openapi-generator's clients send through a DataLoader (docs/openapi.md).
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                "CourierKit", "CourierCore",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),

        // MARK: - Tools
        .executableTarget(
            name: "courier",
            dependencies: [
                // Every module the tool imports, as the import check requires. (SwiftPM also fails to rebuild a
                // target when only a module it reaches indirectly changes, swift-package-manager#10483: release
                // builds inline across modules, so a stale executable could allocate objects of an old size.)
                "CourierCore", "CourierCrypto", "CourierPolicy", "CourierLint", "CourierKit", "CourierHTTP1",
                "CourierTransport", "CourierAuthorisers", "CourierPosix", "CourierCache", "CourierHTTPCache", "CourierTLS",
                "CourierRedis", "CourierCoordination",
                // The demo's upstream is the test kit's MockServer.
                "CourierTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MARK: - Fuzzing (docs/fuzzing.md)
        // The libFuzzer targets' harnesses. In this package, not one of their own, so that they reach the parsers'
        // `package` API (another package sees only the public one); in no product, so none of it is public.
        .target(
            name: "CourierFuzz",
            dependencies: [
                "CourierCore", "CourierPolicy", "CourierHTTP1", "CourierTransport", "CourierCache", "CourierHTTPCache",
                "CourierRedis",
            ]
        ),
        // libFuzzer's LLVMFuzzerRunDriver, declared only: just Fuzz/run.sh's build calls it, and links the runtime.
        .systemLibrary(name: "CCourierLibFuzzer"),
        // Every fuzz target in one executable: it replays files in an ordinary build (so `swift build` builds and
        // links the harnesses), and hands its arguments to libFuzzer in Fuzz/run.sh's (-DCOURIER_FUZZ).
        .executableTarget(name: "courier-fuzz", dependencies: ["CourierFuzz", "CCourierLibFuzzer"]),
        .plugin(
            name: "LintPolicies",
            capability: .command(
                intent: .custom(verb: "lint-policies", description: "Lint Courier policy files (default: policies/)")
            ),
            dependencies: ["courier"]
        ),
        // Lint at build time (issue 26): a build-tool plugin that lints a target's policy files on every build, with
        // a tool of its own that links the policy compiler and the linter only (docs/lint.md: a package using the
        // plugin builds a fraction of what `courier` needs).
        .executableTarget(name: "courier-policy-lint", dependencies: ["CourierCore", "CourierPolicy", "CourierLint"]),
        .plugin(name: "LintPoliciesOnBuild", capability: .buildTool(), dependencies: ["courier-policy-lint"]),

        // MARK: - Tests
        // Loopback peers for the tests: Python's http.server (Tests/Peers) and a scripted raw-socket server.
        .target(
            name: "CourierTestSupport",
            dependencies: ["CourierCore", "CourierPosix", "CCourierTestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/CourierTestSupport"
        ),
        // posix_spawn with closefrom for the tests' child processes (Foundation's Process scans /proc/self/fd
        // on every launch, and its pipe reads stop the process on EINTR).
        .target(name: "CCourierTestSupport", path: "Tests/CCourierTestSupport"),
        .testTarget(name: "CourierCoreTests", dependencies: ["CourierCore"]),
        .testTarget(name: "CourierCryptoTests", dependencies: ["CourierCrypto"]),
        .testTarget(
            name: "CourierPolicyTests",
            dependencies: ["CourierCore", "CourierPolicy", "CourierTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "CourierLintTests",
            dependencies: ["CourierCore", "CourierPolicy", "CourierLint", "CourierTestSupport"],
            exclude: ["Golden", "Fixtures"]
        ),
        .testTarget(
            name: "CourierHTTP1Tests", dependencies: ["CourierCore", "CourierHTTP1", "CCourierZlib", "CourierTestSupport"]
        ),
        .testTarget(name: "CourierPosixTests", dependencies: ["CourierCore", "CourierPosix", "CourierTestSupport"]),
        .testTarget(name: "CourierTLSTests", dependencies: ["CourierCore", "CourierTLS", "CCourierOpenSSL", "CourierTestSupport"]),
        .testTarget(
            name: "CourierCacheTests",
            dependencies: ["CourierCore", "CourierCrypto", "CourierCache", "CCourierZlib", "CCourierTestSupport", "CourierTestSupport"]
        ),
        .testTarget(
            name: "CourierHTTPCacheTests",
            dependencies: ["CourierCore", "CourierCrypto", "CourierHTTP1", "CourierCache", "CourierHTTPCache", "CourierTestSupport"]
        ),
        .testTarget(
            name: "CourierTransportTests",
            dependencies: [
                "CourierCore", "CourierHTTP1", "CourierPosix", "CourierTransport", "CourierTLS", "CourierTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "CourierAuthorisersTests",
            dependencies: ["CourierCore", "CourierCrypto", "CourierAuthorisers", "CourierTransport", "CourierTestSupport"]
        ),
        .testTarget(
            name: "CourierKitTests",
            dependencies: [
                "CourierKit", "CourierCore", "CourierPolicy", "CourierPosix", "CourierTransport", "CourierAuthorisers",
                "CourierCache", "CourierHTTPCache", "CourierTLS", "CourierTestSupport", "CourierCrypto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "CourierServiceLifecycleTests",
            dependencies: [
                "CourierServiceLifecycle", "CourierKit", "CourierCore", "CourierPolicy", "CourierTransport",
                "CourierTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: [
                "CourierOpenAPI", "CourierKit", "CourierCore", "CourierTestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The Redis client: the pure parts on their own, the rest against a real redis-server (.ci/run installs it).
        .testTarget(
            name: "CourierRedisTests",
            dependencies: ["CourierRedis", "CourierCore", "CourierCrypto", "CourierPosix", "CourierTestSupport"]
        ),
        .testTarget(
            name: "CourierCoordinationTests",
            dependencies: [
                "CourierCoordination", "CourierRedis", "CourierCore", "CourierCrypto", "CourierTestSupport",
                // CourierTransport for the process-local limiter the fleet's GCRA is checked against; the shared
                // token tests run the OAuth plugins against a token endpoint over Courier's transport.
                "CourierAuthorisers", "CourierTransport",
            ]
        ),
        .testTarget(
            name: "CourierTestingTests",
            dependencies: [
                "CourierTesting", "CourierCore", "CourierHTTP1", "CourierKit", "CourierTransport", "CourierTLS",
                "CourierPolicy", "CourierAuthorisers", "CourierPosix",
            ]
        ),
        // The fuzz targets' seed corpora, replayed through their harnesses.
        .testTarget(name: "CourierFuzzTests", dependencies: ["CourierFuzz"]),
        .testTarget(
            name: "CourierCLITests",
            dependencies: ["courier", "courier-policy-lint", "CourierCore", "CourierCrypto", "CourierCache", "CourierTesting", "CourierTestSupport"],
            exclude: ["Golden", "Fixtures"]
        ),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin && !target.name.hasPrefix("CCourier") {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
