// swift-tools-version:6.0
//
// The castline plugin SDK on its own: the C ABI header, CastPluginKit (Swift protocols that
// become the ABI's vtables), CastJSON (the JSON module CastPluginKit speaks) and CastBackoff
// (the backoff every retry loop of castline's uses). A Swift plugin
// depends on this package, and resolves nothing else: no swift-nio, no swift-log, no castline.
// castline's own Package.swift builds the same three folders (SDK/Sources) for its plugins and
// its host, so the SDK a plugin builds against is the one castline was built with.
// Guide: Plugins/README.md ("Writing one").

import PackageDescription

let package = Package(
    name: "castline-plugin-sdk",
    products: [
        .library(name: "CastPluginKit", targets: ["CastPluginKit", "CastJSON", "CastBackoff"]),
        // The C header alone, for a plugin written in C inside a Swift package.
        .library(name: "CCastPluginABI", targets: ["CCastPluginABI"]),
    ],
    targets: [
        .target(name: "CCastPluginABI", exclude: ["castline-plugin.pc.in"]),
        .target(name: "CastJSON"),
        // Exponential backoff with jitter, pure (a plugin's reconnect loop; the host's use it too).
        .target(name: "CastBackoff"),
        .target(name: "CastPluginKit", dependencies: ["CCastPluginABI", "CastJSON"]),
    ]
)
