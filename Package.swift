// swift-tools-version:6.0
//
// castline — a headless Google Cast sender for Linux.
// Module graph, products and the rules that keep them: docs/architecture.md.

import PackageDescription

let package = Package(
    name: "castline",
    platforms: [.macOS(.v15)],
    products: [
        // What another package builds on: the sender framework (with the value types, wire
        // messages and JSON its API speaks), logging, the plugin SDK, and the receiver simulator
        // (the state machines and the server on sockets).
        .library(name: "CastSender", targets: ["CastSender", "CastCore", "CastProtocol", "CastJSON"]),
        .library(name: "CastLogging", targets: ["CastLogging"]),
        .library(name: "CastPluginKit", targets: ["CastPluginKit", "CastJSON", "CastBackoff"]),
        .library(name: "CastReceiverSim", targets: ["CastReceiverSim", "CastReceiverSimServer"]),
        // castline's own Benchmarks/ and Fuzz/ packages (built with flags of their own, so not
        // targets here) reach the modules they measure and fuzz through this; not an API: it
        // changes with castline. CastProtoReference holds the generated SwiftProtobuf types, the
        // reference for the hand-written codecs (tests, fuzzing, benchmarks; never a dependency of
        // the executable, a library or a plugin).
        .library(name: "_CastlineInternals", targets: [
            "CastProtoReference", "CastDeviceAuth", "SystemCrypto", "CastPluginHost", "CastlineConfig", "CastlineLogs", "CastNearby",
        ]),
        .executable(name: "castline", targets: ["castline"]),
        // `castline plugins test --in-process` as a program valgrind 3.19 can run (make plugin-memcheck).
        .executable(name: "castline-plugin-harness", targets: ["castline-plugin-harness"]),
        // First-party plugins: one dynamic library each, loaded by the host at run time
        // (never linked into it). The `libCastlinePlugin` prefix is what the host looks for
        // next to the binary.
        .library(name: "CastlinePluginJSONSink", type: .dynamic, targets: ["JSONSink"]),
        .library(name: "CastlinePluginMediaFormats", type: .dynamic, targets: ["MediaFormats"]),
        .library(name: "CastlinePluginJournaldSink", type: .dynamic, targets: ["JournaldSink"]),
        .library(name: "CastlinePluginAvahiDiscovery", type: .dynamic, targets: ["AvahiDiscovery"]),
        .library(name: "CastlinePluginEchoChannelC", type: .dynamic, targets: ["EchoChannelC"]),
        .library(name: "CastlinePluginPingChannel", type: .dynamic, targets: ["PingChannel"]),
        .library(name: "CastlinePluginWebPages", type: .dynamic, targets: ["WebPages"]),
        .library(name: "CastlinePluginMQTTBridge", type: .dynamic, targets: ["MQTTBridge"]),
        // Plugins the tests load to check every refusal (not shipped; no CastlinePlugin prefix).
        .library(name: "TestPluginGood", type: .dynamic, targets: ["TestPluginGood"]),
        .library(name: "TestPluginBridge", type: .dynamic, targets: ["TestPluginBridge"]),
        .library(name: "TestPluginBadMajor", type: .dynamic, targets: ["TestPluginBadMajor"]),
        .library(name: "TestPluginNewerMinor", type: .dynamic, targets: ["TestPluginNewerMinor"]),
        .library(name: "TestPluginNoEntry", type: .dynamic, targets: ["TestPluginNoEntry"]),
        .library(name: "TestPluginInitFails", type: .dynamic, targets: ["TestPluginInitFails"]),
        .library(name: "TestPluginRanked", type: .dynamic, targets: ["TestPluginRanked"]),
        .library(name: "TestPluginSendOnOpen", type: .dynamic, targets: ["TestPluginSendOnOpen"]),
        .library(name: "TestPluginCrashesInInit", type: .dynamic, targets: ["TestPluginCrashesInInit"]),
        .library(name: "TestPluginHangsInInit", type: .dynamic, targets: ["TestPluginHangsInInit"]),
        .library(name: "TestPluginBlocks", type: .dynamic, targets: ["TestPluginBlocks"]),
        .library(name: "TestPluginCrashesInChannel", type: .dynamic, targets: ["TestPluginCrashesInChannel"]),
        .executable(name: "castline-test-logwriter", targets: ["castline-test-logwriter"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // MARK: System libraries (module map + pkg-config) and the C shim for variadic calls.
        .systemLibrary(name: "CAvahi", pkgConfig: "avahi-client", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // libmosquitto: linked by the MQTT bridge plugin only, never by the host.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // Container probing, linked by the media-formats plugin only.
        .systemLibrary(name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        // glibc's memmem, which Swift's Glibc module does not export.
        .target(name: "CCastShims"),

        // MARK: Core modules.
        .target(
            name: "CastLogging",
            dependencies: ["CastJSON", .product(name: "Logging", package: "swift-log")]
        ),
        // JSON values, the parser (tape and tree), the writer and the string escaper: a leaf value
        // module with no dependencies, linked by the host's modules and by Swift plugins alike.
        .target(name: "CastJSON", path: "SDK/Sources/CastJSON"),
        // The one exponential backoff with jitter (pure): a leaf in the SDK like CastJSON, so the
        // host's retry loops and a plugin's (the MQTT bridge's) share it.
        .target(name: "CastBackoff", path: "SDK/Sources/CastBackoff"),
        // Resources/device-capabilities.json is embedded by scripts/generate-device-capabilities.sh.
        .target(name: "CastCore", dependencies: ["CastJSON"], exclude: ["Resources"]),
        // The wire: CastMessage, the hand-written proto2 reader and writer (ProtoWireReader,
        // ProtoWireOutput), frame codec, NIO handlers. No SwiftProtobuf: product code stays free
        // of Foundation, which SwiftProtobuf imports (the generated types are CastProtoReference's).
        .target(
            name: "CastProtocol",
            dependencies: [
                "CastCore",
                "CastLogging",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // System OpenSSL behind a Swift-only surface (keys, X.509, signatures). Never imported
        // together with BoringSSL (NIOSSL) in one module: see ARCHITECTURE.md.
        .target(name: "SystemCrypto", dependencies: ["COpenSSL", "CastCore"]),
        // Cast device authentication (deviceauth namespace): its messages with a hand-written codec,
        // the device's answer to a challenge and the sender's check of that answer. No sockets.
        .target(name: "CastDeviceAuth", dependencies: ["CastProtocol", "SystemCrypto"]),

        // The one HTTP layer's client side and what every listening socket needs: HTTPExchange (one
        // bounded HTTP(S)/1.1 request, Range through its headers), HTTPURL (the one URL parser),
        // ListenerErrorHandler, ConnectionGate and DescriptorShortage. Neutral: no Cast types, no sender, no hub.
        .target(
            name: "CastHTTP",
            dependencies: [
                "CastCore", "CastLogging",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: Sender.
        // TLS client connection: the Cast codec, heartbeat and device auth on a socket; and the
        // one eureka_info GET that names a device given by address. The only sender module that
        // touches sockets.
        .target(
            name: "CastTransport",
            dependencies: [
                "CastProtocol", "CastCore", "CastLogging", "CastDeviceAuth", "SystemCrypto", "CastHTTP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // The framework: CastContext, CastOptions, DiscoveryManager (+ static hosts), SessionManager,
        // CastSession (pure SessionStateMachine underneath), RemoteMediaClient, GenericChannel, CastRequest.
        .target(
            name: "CastSender",
            dependencies: [
                "CastTransport", "CastProtocol", "CastCore", "CastLogging", "SystemCrypto", "CastBackoff",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        // MARK: Receiver simulator.
        // Pure device/app/media state machines: no sockets, driven by messages and a clock.
        .target(
            name: "CastReceiverSim",
            dependencies: ["CastProtocol", "CastCore", "CastLogging"]
        ),
        // The simulator on real sockets: TLS 8009, eureka_info on 8008/8443, mDNS via avahi,
        // device auth, fault injection, control socket, frame log.
        .target(
            name: "CastReceiverSimServer",
            dependencies: [
                "CastReceiverSim", "CastDeviceAuth", "CastProtocol", "CastCore", "CastLogging", "SystemCrypto", "CastHTTP",
                "CAvahi", "CCastShims",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: Plugins.
        // The C ABI shared by host and plugins (header only).
        .target(name: "CCastPluginABI", path: "SDK/Sources/CCastPluginABI", exclude: ["castline-plugin.pc.in"]),
        // SDK for Swift plugins: protocols that become the C vtables. Depends on the ABI and on CastJSON
        // (a leaf value module, linked into each plugin).
        .target(name: "CastPluginKit", dependencies: ["CCastPluginABI", "CastJSON"], path: "SDK/Sources/CastPluginKit"),
        // Search path, dlopen, ABI checks, registry, host services, helper processes; channels,
        // discovery, media-format probes and log sinks on neutral interfaces (no sessions).
        .target(
            name: "CastPluginHost",
            dependencies: ["CCastPluginABI", "CCastShims", "CastCore", "CastLogging", "CastBackoff"]
        ),
        // Binds loaded plugins to CastSender's sessions and discovery: a channel's namespaces on a
        // CastSession, its app events, a discovery feature as a DiscoveryProvider.
        .target(name: "CastPluginSession", dependencies: ["CastPluginHost", "CastSender", "CastCore"]),
        // The plugin test harness (`castline plugins test`): a plugin file through the real loader,
        // a simulated device whose app speaks its namespaces, a real session, a script of steps.
        .target(
            name: "CastPluginTesting",
            dependencies: ["CastPluginHost", "CastPluginSession", "CastReceiverSimServer", "CastReceiverSim", "CastSender", "CastLogging", "CastCore"]
        ),
        .target(name: "JSONSink", dependencies: ["CastPluginKit", "CastJSON"], path: "Plugins/JSONSink", exclude: ["README.md"]),
        .target(name: "MediaFormats", dependencies: ["CastPluginKit", "CastJSON", "CAVFormat"], path: "Plugins/MediaFormats"),
        .target(name: "JournaldSink", dependencies: ["CastPluginKit", "CastJSON", "CSystemd"], path: "Plugins/JournaldSink"),
        .target(name: "AvahiDiscovery", dependencies: ["CastPluginKit", "CastJSON", "CAvahi"], path: "Plugins/AvahiDiscovery"),
        // Example channels: one in plain C with jansson, one in Swift with CastPluginKit.
        // Each has a harness script (`castline plugins test … --script harness.json`).
        .target(name: "EchoChannelC", dependencies: ["CCastPluginABI"], path: "Plugins/EchoChannelC", exclude: ["harness.json"],
                publicHeadersPath: ".", linkerSettings: [.linkedLibrary("jansson")]),
        .target(name: "PingChannel", dependencies: ["CastPluginKit", "CastJSON"], path: "Plugins/PingChannel", exclude: ["harness.json"]),
        .target(name: "WebPages", dependencies: ["CastPluginKit", "CastJSON"], path: "Plugins/WebPages"),
        // bridge:mqtt (ABI 1.1): fleet state and commands over an MQTT broker, Home Assistant discovery.
        .target(name: "MQTTBridge", dependencies: ["MQTTBridgeCore", "CastPluginKit", "CastJSON", "CMosquitto"], path: "Plugins/MQTTBridge",
                exclude: ["Core"]),
        // The bridge's pure parts (topics, commands, HA discovery, coalescing, backoff), linked into the plugin, tested alone.
        .target(name: "MQTTBridgeCore", dependencies: ["CastJSON", "CastBackoff"], path: "Plugins/MQTTBridge/Core"),
        .target(name: "TestPluginGood", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/Good", publicHeadersPath: "."),
        .target(name: "TestPluginBridge", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/Bridge", publicHeadersPath: "."),
        .target(name: "TestPluginBadMajor", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/BadMajor", publicHeadersPath: "."),
        .target(name: "TestPluginNewerMinor", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/NewerMinor", publicHeadersPath: "."),
        .target(name: "TestPluginNoEntry", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/NoEntry", publicHeadersPath: "."),
        .target(name: "TestPluginInitFails", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/InitFails", publicHeadersPath: "."),
        .target(name: "TestPluginRanked", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/Ranked", publicHeadersPath: "."),
        .target(name: "TestPluginSendOnOpen", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/SendOnOpen", publicHeadersPath: "."),
        .target(name: "TestPluginCrashesInInit", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/CrashesInInit", publicHeadersPath: "."),
        .target(name: "TestPluginHangsInInit", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/HangsInInit", publicHeadersPath: "."),
        .target(name: "TestPluginBlocks", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/Blocks", publicHeadersPath: "."),
        .target(name: "TestPluginCrashesInChannel", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/CrashesInChannel", publicHeadersPath: "."),
        // Drives a log-sink plugin from its own process (kill -9 and saturation tests).
        .executableTarget(name: "castline-test-logwriter", dependencies: ["CCastPluginABI"], path: "Tests/PluginFixtures/LogWriter",
                          linkerSettings: [.linkedLibrary("dl")]),

        // MARK: Configuration.
        // The YAML config file (libyaml events → positioned nodes → typed, checked settings with
        // every error at file:line:column). No sockets, no sender types.
        .target(name: "CastlineConfig", dependencies: ["CYAML", "CastCore", "CastLogging"]),

        // The hub's local media: which files may be served (`media.roots`), the HTTP server that
        // hands them to Cast devices (Range requests, an unguessable URL, CORS) on the address that
        // faces each device, what each cast published for its device, transcodes (ffmpeg to HLS)
        // and subtitle tracks.
        .target(name: "CastlineLocalMedia", dependencies: [
            "CastLogging", "CastHTTP", "CastCore", "CastSender", "CastlineConfig", "CCastShims",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),

        // `castline run`: config jobs as pure state machines (JobStateMachine) driven by discovery,
        // session and media events; systemd notifications through libsystemd.
        // Video walls: many TVs started at one instant and held together (NTP-style delay
        // filter, start plan, drift corrections, pure; the wall's actor drives any WallMember).
        .target(name: "CastlineSync", dependencies: ["CastCore", "CastLogging"]),

        // What a job is and decides: its state machine (pure), its media and playlists, the
        // queue window, announcement times, what castline assumes of each device (field
        // knowledge, the screen reading) and the probe of a failed cast's server.
        .target(name: "CastlineJobs", dependencies: [
            "CastlineConfig", "CastSender", "CastProtocol", "CastCore", "CastLogging", "CastHTTP", "CastBackoff", "CastlineLocalMedia",
            .product(name: "NIOCore", package: "swift-nio"),
        ]),

        .target(name: "CastlineDaemon", dependencies: [
            "CastlineJobs", "CastlineSync", "CastlineConfig", "CastSender", "CastProtocol", "CastCore", "CastLogging", "CastlineLocalMedia", "CastNearby", "CastlineLogs", "CastHTTP",
            "CastBackoff",
            "CSystemd", "CCastShims",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),

        // The control API of `castline run`: HTTP/1.1 + JSON on a Unix socket and optional TCP
        // (bearer token, TLS), server-sent events, Prometheus metrics; and the CLI's client.
        .target(name: "CastlineAPI", dependencies: [
            "CastlineDaemon", "CastCore", "CastLogging", "CastHTTP",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),

        // `castline logs`: read castline's JSON Lines and journal entries back, filter, summarise,
        // draw a timeline. No sockets.
        .target(name: "CastlineLogs", dependencies: ["CastCore", "CastLogging", "CSystemd", "CCastShims"]),

        // Nearby messages: consent-gated publish/subscribe of small payloads over DNS-SD (avahi) or
        // in-process; the found/lost bookkeeping is a pure set, the media are the only I/O.
        .target(name: "CastNearby", dependencies: ["CAvahi", "CastCore", "CastLogging"]),

        // MARK: The command-line tool.
        .executableTarget(name: "castline-plugin-harness", dependencies: ["CastPluginTesting", "CastCore"]),
        .executableTarget(
            name: "castline",
            dependencies: [
                "CastReceiverSimServer", "CastReceiverSim", "CastLogging", "CastCore", "CastSender", "CastPluginHost", "CastPluginSession",
                "CastlineConfig", "CastTransport", "CastProtocol", "CastlineLocalMedia", "CastlineDaemon", "CastlineAPI", "CastlineLogs",
                "CastNearby", "CastPluginTesting", "CastHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: Tests.
        // The generated SwiftProtobuf types (Generated/, from Protos/ by scripts/generate-protos.sh)
        // and the conversions that make them the reference for CastProtocol's CastMessage wire
        // reader and writer and CastDeviceAuth's device-auth codec. Test-only: SwiftProtobuf
        // imports Foundation, which product code stays free of (process start-up cost).
        .target(name: "CastProtoReference", dependencies: [
            "CastProtocol", "CastCore", "CastDeviceAuth",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        ]),
        // Test helpers shared by the test targets (in-memory log sink, seeded random numbers).
        .target(name: "CastTestSupport", dependencies: [
            "CastCore", "CastLogging", "SystemCrypto",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ], path: "Sources/CastTestSupport"),
        .testTarget(name: "CastLoggingTests", dependencies: [
            "CastLogging", "CastTestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "CastJSONTests", dependencies: ["CastJSON", "CastTestSupport"]),
        .testTarget(name: "CastBackoffTests", dependencies: ["CastBackoff"]),
        .testTarget(name: "CastCoreTests", dependencies: ["CastCore", "CastTestSupport"]),
        .testTarget(name: "CastlineConfigTests", dependencies: ["CastlineConfig", "CastCore", "CastTestSupport"]),
        .testTarget(name: "CastlineEndToEndTests", dependencies: ["castline", "CastTestSupport", "CastCore", "CastlineDaemon"]),
        .testTarget(name: "CastlineLogsTests", dependencies: ["CastlineLogs", "CastCore", "CastLogging", "CastTestSupport"]),
        .testTarget(name: "CastNearbyTests", dependencies: ["CastNearby", "CastCore", "CastLogging", "CastTestSupport"]),
        .testTarget(name: "CastlineSyncTests", dependencies: ["CastlineSync", "CastCore", "CastLogging"]),
        .testTarget(name: "CastlineDaemonTests", dependencies: ["CastlineDaemon", "CastlineJobs", "CastlineConfig", "CastNearby", "CastTestSupport", "CastHTTP"]),
        .testTarget(name: "CastlineJobsTests", dependencies: [
            "CastlineJobs", "CastlineConfig", "CastSender", "CastCore", "CastLogging", "CastHTTP", "CastTestSupport",
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // The HTTP client against real loopback servers, the URL parser, the listeners' error handler.
        .testTarget(name: "CastHTTPTests", dependencies: [
            "CastHTTP", "CastCore", "CastLogging", "CastTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        .testTarget(name: "CastlineLocalMediaTests", dependencies: [
            "CastlineLocalMedia", "CastlineConfig", "CastSender", "CastCore", "CastLogging", "CastTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .testTarget(name: "CastProtocolTests", dependencies: [
            "CastProtocol", "CastCore", "CastLogging", "CastTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            "CastProtoReference",
        ]),
        .testTarget(name: "SystemCryptoTests", dependencies: ["SystemCrypto", "CastTestSupport"]),
        .testTarget(name: "CastDeviceAuthTests", dependencies: [
            "CastDeviceAuth", "CastProtocol", "SystemCrypto", "CastTestSupport", "CastProtoReference",
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        ]),
        .testTarget(name: "CastReceiverSimTests", dependencies: [
            "CastReceiverSim", "CastProtocol", "CastCore", "CastLogging", "CastTestSupport",
        ]),
        .testTarget(name: "CastReceiverSimServerTests", dependencies: [
            "CastReceiverSimServer", "CastReceiverSim", "CastDeviceAuth", "CastProtocol", "CastCore", "CastLogging",
            "SystemCrypto", "CastTestSupport", "CastTransport", "CastlineLocalMedia",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        .testTarget(name: "CastTransportTests", dependencies: [
            "CastTransport", "CastReceiverSimServer", "CastProtocol", "CastCore", "CastLogging", "SystemCrypto",
            "CastTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOTLS", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        .testTarget(name: "CastSenderTests", dependencies: [
            "CastSender", "CastPluginHost", "CastPluginSession", "CastTransport", "CastReceiverSimServer", "CastReceiverSim", "CastProtocol", "CastCore", "CastLogging",
            "SystemCrypto", "CastTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .testTarget(name: "CastPluginHostTests", dependencies: [
            "CastPluginHost", "CastPluginSession", "CCastPluginABI", "CastSender", "CastCore", "CastLogging", "CastTestSupport", "CastlineLogs",
            "CastPluginTesting",
        ]),
        .testTarget(name: "CastPluginSessionTests", dependencies: ["CastPluginSession", "CastPluginHost", "CastSender", "CastCore"]),
        .testTarget(name: "MQTTBridgeCoreTests", dependencies: ["MQTTBridgeCore", "CastJSON"]),
        // The control API's route table without sockets: routing, decoding, the generated OpenAPI
        // document, and MQTT's command names held to the table (the bridge cannot import it); and
        // the listeners' error handler.
        .testTarget(name: "CastlineAPITests", dependencies: [
            "CastlineAPI", "CastlineDaemon", "CastlineConfig", "CastCore", "CastLogging", "CastHTTP", "MQTTBridgeCore", "CastTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        .testTarget(name: "SystemLibraryTests", dependencies: [
            "CCastShims", "CAvahi", "CSystemd", "CJansson", "COpenSSL",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
