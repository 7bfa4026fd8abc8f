// swift-tools-version:6.1
// Testing an app's own client with CourierTesting: `WeatherClient` (a small client library on CourierKit whose
// policy rate-limits, retries with a back-off, honours Retry-After and refreshes an OAuth2 token) and its Swift
// Testing suite, which scripts the weather API and the token endpoint with a ScriptedTransport and advances a
// ManualClock: minutes of policy waits in milliseconds of wall time, no network. CI runs `swift test` here (.ci/run).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "WeatherClientTesting",
    dependencies: [.package(path: courierPath)],
    targets: [
        // The app's client: CourierKit only; its policy is a resource.
        .target(
            name: "WeatherClient",
            dependencies: [.product(name: "CourierKit", package: courier)],
            resources: [.copy("weather-policy.yaml")],
            // Imports state their level (`public import CourierKit`); the generated resource accessor's plain
            // `import Foundation` is then internal too.
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        // Its tests: the test kit is a dependency of the test target only, never of the client.
        .testTarget(
            name: "WeatherClientTests",
            dependencies: [
                "WeatherClient",
                .product(name: "CourierKit", package: courier),
                .product(name: "CourierTesting", package: courier),
            ]
        ),
    ]
)
