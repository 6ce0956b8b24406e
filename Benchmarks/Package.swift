// swift-tools-version:6.0
// castline benchmarks: `make bench` (release build). Prints one JSON object per line:
// {"name":…, "value":…, "unit":…, …}. Not built by `swift test` in the root package.
import PackageDescription

let package = Package(
    name: "castline-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "castline", path: "..")],
    targets: [
        .executableTarget(
            name: "castline-bench",
            dependencies: [
                .product(name: "CastLogging", package: "castline"),
                .product(name: "CastSender", package: "castline"),
                // The generated SwiftProtobuf type, to compare the wire writer with.
                .product(name: "_CastlineInternals", package: "castline"),
            ]
        ),
        // Sessions on many simulated devices: time to all-PLAYING, RSS per session, idle CPU,
        // reconnect latency. Driven by sender-fleet.py (which also runs pychromecast).
        .executableTarget(
            name: "castline-sender-bench",
            dependencies: [
                .product(name: "CastSender", package: "castline"),
                .product(name: "CastLogging", package: "castline"),
            ]
        ),
        // Log-sink plugins (JSON, journald) loaded from their .so: throughput and caller cost.
        .executableTarget(
            name: "castline-sink-bench",
            dependencies: [
                .product(name: "_CastlineInternals", package: "castline"),
                .product(name: "CastLogging", package: "castline"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
