// swift-tools-version:6.1
// Lint at build time: a package that keeps its Courier policy in a target's resources and lints it on every
// `swift build` with Courier's LintPoliciesOnBuild plugin. A policy error fails the build with the policy's file,
// line and column; a warning is printed and the build goes on. The target needs no Courier library to be linted:
// this one depends on none, so building it builds the plugin's small tool only (docs/lint.md). CI builds it as it
// is (it must build, and print its policy's one warning) and a copy with a broken policy (it must fail with the
// diagnostic), see .ci/run.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the plugin reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "LintAtBuildTime",
    products: [.library(name: "PartnerAPI", targets: ["PartnerAPI"])],
    dependencies: [.package(path: courierPath)],
    targets: [
        .target(
            name: "PartnerAPI",
            resources: [.copy("policies")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")],
            plugins: [.plugin(name: "LintPoliciesOnBuild", package: courier)]
        )
    ]
)
