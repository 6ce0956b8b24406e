import SystemCrypto
import CastCore
import CastReceiverSim

/// Everything a simulator run needs besides its devices. Value type; `Sendable`.
public struct SimulatorSettings: Sendable {
    /// Apps besides the Default Media Receiver (always installed).
    public var apps: [AppDefinition] = []
    /// Media rules (first match wins): videoInfo, duration, load errors by URL / content type.
    public var mediaRules: [MediaRule] = []
    /// PING an idle sender after this many seconds (real devices: about 5).
    public var pingInterval: Double = 5
    /// Drop a sender that sent nothing for longer than this.
    public var heartbeatTimeout: Double = 15
    /// BUFFERING → PLAYING delay, launch delay; LOADs of loopback media wait for the fetch
    /// (``PlaybackTiming/checksLoopbackMedia``, on by default).
    public var timing = PlaybackTiming(checksLoopbackMedia: true)
    /// How long a device waits for loopback media before the LOAD fails (a timeout).
    public var mediaFetchTimeout: Double = 5
    /// Advertise devices over mDNS through avahi-daemon.
    public var advertise = true
    /// JSON-lines frame log; nil = none.
    public var frameLogPath: String?
    /// Unix socket for control commands; nil = none.
    public var controlSocketPath: String?
    /// Folder holding the simulator root CA (created when missing); nil = a fresh CA in memory.
    public var authorityDirectory: String?
    /// A CA to use as is (wins over ``authorityDirectory``): test suites share one instead of
    /// generating three RSA-2048 keys per simulator.
    public var authority: SimulatorAuthority?
    /// Faults active from the start on every device.
    public var initialFaults = DeviceFaults()
    /// Seconds between TLS identity renewals (the certificate lives 96 h; default 72 h).
    public var tlsRenewalInterval: Double = 72 * 3600
    /// TLS profile of the devices whose configuration names none (`castline sim --tls`); nil:
    /// each device's model decides (``DeviceTLSProfile/defaultProfile(model:)``).
    public var tlsProfile: DeviceTLSProfile?
    /// Event-loop threads; nil = one per core, at most 4.
    public var threads: Int?
    /// `--replay`: answer from this capture first, the standard model otherwise (``ReplayScript``).
    public var replay: ReplayScript?
    /// The field profile of the devices whose configuration names none (`--profile`).
    public var fieldProfile: FieldProfileChoice = .ideal
    /// Seeds the field profiles' chances (launch outcomes, the daily reboot's moment) with the
    /// device's index (`castline sim --seed`): the same seed, the same run.
    public var fieldSeed: UInt64 = 0
    /// Every profile's durations divided by this (`--field-time-scale`; 60: a day in 24 minutes).
    public var fieldTimeScale: Double = 1

    public init() {}

    /// The field profile `configuration` runs with: its own, else the simulator's choice,
    /// compressed by ``fieldTimeScale``.
    public func fieldProfile(for configuration: SimulatedDeviceConfiguration) -> FieldProfile {
        let base: FieldProfile
        if let own = configuration.field {
            base = own
        } else {
            switch fieldProfile {
            case .ideal: base = .ideal
            case .model: base = FieldProfile.forModel(configuration.model, isVideoDevice: configuration.isVideoDevice)
            case .named(let profile): base = profile
            }
        }
        return base.scaled(by: fieldTimeScale)
    }

    /// The app catalogue: the Default Media Receiver, the web-page apps (DashCast, Home
    /// Assistant's dashboard, castline's receiver), the plugin examples app, then the configured apps (a configured
    /// app with the same id replaces the built-in one).
    public var catalogue: [AppDefinition] {
        var apps = [AppDefinition.defaultMediaReceiver, AppDefinition.dashCast, AppDefinition.homeAssistantDashboard,
                    AppDefinition.castlineReceiver, AppDefinition.pluginExamples]
        for app in self.apps {
            if let index = apps.firstIndex(where: { $0.appID == app.appID }) { apps[index] = app } else { apps.append(app) }
        }
        return apps
    }
}

/// Which field profile a device without its own runs (`castline sim --profile`).
public enum FieldProfileChoice: Sendable, Equatable {
    /// The well-behaved device (``FieldProfile/ideal``): the default.
    case ideal
    /// Each device its model's (``FieldProfile/forModel(_:isVideoDevice:)``).
    case model
    /// One profile for every device.
    case named(FieldProfile)

    /// `ideal`, `model` or a built-in profile's name; nil for anything else.
    public init?(name: String) {
        switch name {
        case "ideal": self = .ideal
        case "model": self = .model
        default:
            guard let profile = FieldProfile.named(name) else { return nil }
            self = .named(profile)
        }
    }
}

/// Faults injected into one device (flags at start, control socket at run time). Value type.
public struct DeviceFaults: Sendable, Equatable {
    /// Do not answer PINGs (senders should declare the device dead).
    public var ignorePings = false
    /// Send every reply this many seconds late.
    public var replyDelay: Double = 0
    /// Close every connection this many seconds after it opened; nil = never.
    public var dropAfter: Double?

    public init(ignorePings: Bool = false, replyDelay: Double = 0, dropAfter: Double? = nil) {
        self.ignorePings = ignorePings
        self.replyDelay = replyDelay
        self.dropAfter = dropAfter
    }

    var json: JSONValue {
        var object: JSONObject = ["ignorePings": .bool(ignorePings), "replyDelay": .double(replyDelay)]
        if let dropAfter { object.set("dropAfter", .double(dropAfter)) }
        return .object(object)
    }
}
