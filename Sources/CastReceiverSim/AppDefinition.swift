import CastCore

/// One app of a simulated device's catalogue. Value type.
public struct AppDefinition: Sendable, Hashable {
    public var appID: String
    public var displayName: String
    /// Announced in RECEIVER_STATUS `applications[].namespaces` (custom namespaces are added when
    /// missing). The media namespace makes the app a media player.
    public var namespaces: [CastNamespace]
    /// MEDIA_STATUS `supportedMediaCommands` (queue next/prev bits are added while the queue has
    /// more than one item).
    public var supportedMediaCommands: SupportedMediaCommands
    /// How the app answers on its own namespaces. A namespace in ``namespaces`` that is neither
    /// media nor listed here echoes.
    public var customNamespaces: [CustomNamespaceBehaviour]
    public var iconURL: String
    /// The ambient app: reported with `isIdleScreen: true`; does not make the device busy.
    public var isIdleScreen: Bool
    /// The app plays silent media of its own (castline's receiver page): to the device it always
    /// shows media, so no idle timer closes it and ambient mode does not cover it. It reports no
    /// media to senders.
    public var keepsItselfAlive = false

    public init(
        appID: String, displayName: String, namespaces: [CastNamespace] = [],
        supportedMediaCommands: SupportedMediaCommands = .allBasicMedia, customNamespaces: [CustomNamespaceBehaviour] = [],
        iconURL: String = "", isIdleScreen: Bool = false
    ) {
        self.appID = appID
        self.displayName = displayName
        self.namespaces = namespaces
        self.supportedMediaCommands = supportedMediaCommands
        self.customNamespaces = customNamespaces
        self.iconURL = iconURL
        self.isIdleScreen = isIdleScreen
    }

    /// `true` when the app declares `urn:x-cast:com.google.cast.media`.
    public var isMediaPlayer: Bool { namespaces.contains(.media) }

    /// ``namespaces`` plus the custom namespaces not already listed, in order.
    public var announcedNamespaces: [CastNamespace] {
        var result = namespaces
        for custom in customNamespaces where !result.contains(custom.namespace) { result.append(custom.namespace) }
        return result
    }

    /// How the app answers on `namespace`; nil when it does not handle it (media included: the
    /// media player handles that one).
    public func behaviour(for namespace: CastNamespace) -> CustomNamespaceBehaviour.Mode? {
        guard namespace != .media else { return nil }
        if let custom = customNamespaces.first(where: { $0.namespace == namespace }) { return custom.mode }
        return namespaces.contains(namespace) ? .echo : nil
    }

    /// The Default Media Receiver (`CC1AD845`), with the namespaces a 2020 firmware announces and
    /// `supportedMediaCommands` 274447 (ALL_BASIC_MEDIA | STREAM_TRANSFER). Its platform side
    /// channels (cac, debugoverlay, broadcast) stay silent.
    public static let defaultMediaReceiver = AppDefinition(
        appID: "CC1AD845", displayName: "Default Media Receiver",
        namespaces: [
            "urn:x-cast:com.google.cast.cac", "urn:x-cast:com.google.cast.debugoverlay",
            "urn:x-cast:com.google.cast.broadcast", .media,
        ],
        supportedMediaCommands: [.allBasicMedia, .streamTransfer],
        customNamespaces: [
            CustomNamespaceBehaviour(namespace: "urn:x-cast:com.google.cast.cac", mode: .silent),
            CustomNamespaceBehaviour(namespace: "urn:x-cast:com.google.cast.debugoverlay", mode: .silent),
            CustomNamespaceBehaviour(namespace: "urn:x-cast:com.google.cast.broadcast", mode: .silent),
        ]
    )

    /// The plugin examples app (`CA571E00`): declares the namespaces of castline's example channel
    /// plugins so they can be tried and tested end to end. `…example.echo` echoes (EchoChannelC),
    /// `…example.ping` answers PING with PONG (PingChannel), `org.castline.test` echoes (test fixtures).
    public static let pluginExamples = AppDefinition(
        appID: "CA571E00", displayName: "castline plugin examples",
        namespaces: ["urn:x-cast:org.castline.example.echo", "urn:x-cast:org.castline.example.ping", "urn:x-cast:org.castline.test"],
        supportedMediaCommands: [],
        customNamespaces: [
            CustomNamespaceBehaviour(namespace: "urn:x-cast:org.castline.example.echo", mode: .echo),
            CustomNamespaceBehaviour(namespace: "urn:x-cast:org.castline.example.ping",
                                     mode: .scripted(["PING": ["type": "PONG", "server": "castline-sim"]])),
            CustomNamespaceBehaviour(namespace: "urn:x-cast:org.castline.test", mode: .echo),
        ]
    )

    /// Backdrop (`E8C28D3C`), the idle-screen app. Not running unless launched.
    public static let backdrop = AppDefinition(
        appID: "E8C28D3C", displayName: "Backdrop", namespaces: [], supportedMediaCommands: [],
        isIdleScreen: true
    )
}

/// How an app answers messages on one of its own (non-media) namespaces.
public struct CustomNamespaceBehaviour: Sendable, Hashable {
    public var namespace: CastNamespace
    public var mode: Mode

    public init(namespace: CastNamespace, mode: Mode = .echo) {
        self.namespace = namespace
        self.mode = mode
    }

    public enum Mode: Sendable, Hashable {
        /// Sends the payload back unchanged to the sender (text or binary).
        case echo
        /// Never answers.
        case silent
        /// Incoming JSON `type` → reply. The reply gets the incoming `requestId` when the
        /// incoming message has one (and the reply is an object). A type missing from the
        /// table, or a payload that is not a JSON object with a string `type`, is answered
        /// `{"type":"ERROR","reason":"NOT_SUPPORTED"}` (with the `requestId` if any).
        case scripted([String: JSONValue])
        /// DashCast: `{"url", "force", "reload", "reload_time"}` shows the page; no answer.
        case dashCast
        /// Home Assistant Cast: `connect`, `get_status`, `show_lovelace_view`, `show_demo`.
        case homeAssistant
    }
}
