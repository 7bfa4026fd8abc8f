// swift-tools-version:6.1
// An authoriser plugin of your own, as its own small package: copy this folder, rename the type, and register
// it at start-up. CI builds and runs it (see .ci/run).
import PackageDescription

let package = Package(
    name: "CustomAuthoriser",
    dependencies: [.package(path: "../..")],
    targets: [
        // The plugin: depends on CourierKit only.
        .target(name: "ClientTokenAuthoriser", dependencies: [.product(name: "CourierKit", package: "main")]),
        // A program that registers it, compiles a policy that uses it, and signs a request.
        .executableTarget(
            name: "custom-authoriser-demo",
            dependencies: ["ClientTokenAuthoriser", .product(name: "CourierKit", package: "main")],
            resources: [.copy("policy.yaml")]
        ),
    ]
)
