import CastCore
import CastReceiverSim

/// Identity and sockets of one simulated device. Value type; `Sendable`.
public struct SimulatedDeviceConfiguration: Sendable, Equatable {
    /// Friendly name (`fn`, eureka `name`).
    public var name: String
    /// 32 lowercase hex digits (`id`).
    public var uuid: String
    /// Model name (`md`), e.g. `Chromecast`.
    public var model: String
    /// IPv4 address to listen on (loopback: 127.0.0.0/8).
    public var address: String
    /// CASTV2 over TLS (devices: 8009).
    public var castPort: Int
    /// eureka_info over HTTP (devices: 8008).
    public var httpPort: Int
    /// eureka_info over HTTPS (devices: 8443).
    public var httpsPort: Int
    /// Video output (`ca` bit 0, `display_supported`, isActiveInput/isStandBy in RECEIVER_STATUS).
    public var isVideoDevice: Bool
    /// TLS on 8009 and 8443; nil: the simulator's `--tls` setting, else the model's default
    /// (``DeviceTLSProfile/defaultProfile(model:)``).
    public var tlsProfile: DeviceTLSProfile?
    /// Field behaviour (idle closes, launches, ambient, CEC, reboots); nil: the simulator's
    /// `--profile` (``SimulatorSettings/fieldProfile(for:)``).
    public var field: FieldProfile?
    /// One-way delay of every CASTV2 message in both directions (`"latency"`; eureka and HTTP
    /// are not delayed). Zero: no delay at all, as before.
    public var latency: JitteredDelay = .zero
    /// From the playhead set moving to the first frame (`"first_frame"`, ``DeviceProfile/firstFrame``).
    public var firstFrame: JitteredDelay = .zero
    /// The device clock's error (`"clock_drift_ppm"`, ``DeviceProfile/clockDriftPPM``).
    public var clockDriftPPM: Double = 0
    /// The model's playback rates (`"playback_rates"`, ``DeviceProfile/playbackRates``).
    public var playbackRates: ClosedRange<Double> = DeviceProfile.defaultPlaybackRates

    public init(name: String, uuid: String, model: String = "Chromecast", address: String = "127.0.0.1",
                castPort: Int = 8009, httpPort: Int = 8008, httpsPort: Int = 8443, isVideoDevice: Bool = true,
                tlsProfile: DeviceTLSProfile? = nil, field: FieldProfile? = nil) {
        self.field = field
        self.name = name
        self.uuid = uuid
        self.model = model
        self.address = address
        self.castPort = castPort
        self.httpPort = httpPort
        self.httpsPort = httpsPort
        self.isVideoDevice = isVideoDevice
        self.tlsProfile = tlsProfile
    }

    /// The TLS profile this device serves: its own, else `fallback` (the simulator-wide
    /// setting), else its model's default.
    public func effectiveTLSProfile(fallback: DeviceTLSProfile? = nil) -> DeviceTLSProfile {
        tlsProfile ?? fallback ?? DeviceTLSProfile.defaultProfile(model: model)
    }

    /// The `ca` capability bits: video out (1) + audio out (4) + bit 12 as on real Chromecasts (4101);
    /// audio-only devices: audio out + the bits Home Minis send (198660).
    public var capabilityBits: Int { isVideoDevice ? 4101 : 198_660 }

    /// The DNS-SD instance name real devices use: model (spaces → `-`, ≤ 20 bytes) + `-` + id.
    public var instanceName: String {
        let model = String(model.replacingSpaces().utf8.prefix(20)) ?? "Chromecast"
        return "\(model)-\(uuid)"
    }

    /// The facts the device state machine needs.
    public var profile: DeviceProfile {
        DeviceProfile(uuid: uuid, friendlyName: name, model: model, isVideoDevice: isVideoDevice, playbackRates: playbackRates,
                      firstFrame: firstFrame, clockDriftPPM: clockDriftPPM)
    }

    /// `name (address:port)` for logs.
    public var label: String { "\(name) (\(address):\(castPort))" }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(map { $0 == " " ? "-" : $0 }) }
}
