// swift-tools-version:6.1
// Courier's libFuzzer targets: a separate package, so that `swift build` and `swift test` at the root never
// build them (they need -sanitize=fuzzer, which only a fuzzing build passes). One executable per parser, each
// a `@_cdecl("LLVMFuzzerTestOneInput")` entry point; Fuzz/run.sh builds and runs them (see docs/fuzzing.md).
//
// They reach the modules through the CourierKit product, which re-exports CourierCore, CourierPolicy,
// CourierHTTP1 and CourierTransport: the root package keeps CourierKit as its only library product.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = ".."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let targets = ["FuzzResponse", "FuzzDecoder", "FuzzPolicy", "FuzzURL", "FuzzRecord", "FuzzCacheHeaders"]
let swiftSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "CourierFuzz",
    dependencies: [.package(path: courierPath)],
    targets: [
        // What the targets share: reading the control byte and cutting the payload into feeds.
        .target(name: "FuzzSupport", swiftSettings: swiftSettings)
    ]
        + targets.map {
            .executableTarget(
                name: $0,
                dependencies: ["FuzzSupport", .product(name: "CourierKit", package: courier)],
                swiftSettings: swiftSettings
            )
        }
)
