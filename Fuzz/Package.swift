// swift-tools-version:6.0
// libFuzzer targets for castline. Built by scripts/fuzz.sh into ../.build-fuzz with
// -sanitize=fuzzer,address -DFUZZING; a plain build only prints how to run it.
import PackageDescription

let package = Package(
    name: "castline-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "castline", path: "..")],
    targets: [
        .executableTarget(
            name: "castline-fuzz",
            dependencies: [
                .product(name: "CastSender", package: "castline"),
                .product(name: "CastLogging", package: "castline"),
                .product(name: "CastReceiverSim", package: "castline"),
                .product(name: "CastPluginKit", package: "castline"),
                // The generated SwiftProtobuf types (the hand-written codecs' reference), device
                // auth, crypto, config, logs and nearby: castline's internal modules.
                .product(name: "_CastlineInternals", package: "castline"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
