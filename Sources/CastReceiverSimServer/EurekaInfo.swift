import CastCore
import CastReceiverSim

/// The body of `GET /setup/eureka_info` (HTTP 8008 / HTTPS 8443), as Cast devices serve it.
///
/// pychromecast's `get_device_info` and catt read `name`, `device_info.{name, model_name,
/// manufacturer, ssdp_udn, capabilities.display_supported, capabilities.multizone_supported}` and,
/// with `?params=multizone`, `multizone.{groups, dynamic_groups}`. Real devices answer only the
/// top-level keys named in `params` when it is given. Value type; `Sendable`.
public struct EurekaInfo: Sendable, Equatable {
    /// Friendly name (`fn` in mDNS).
    public var name: String
    /// 32 hex digits, no dashes (`id` in mDNS).
    public var uuid: String
    /// Model name (`md` in mDNS), e.g. `Chromecast`.
    public var model: String
    /// The address the device listens on.
    public var ipAddress: String
    /// Video output present (`display_supported`); false makes pychromecast call it an audio device.
    public var displaySupported: Bool
    /// Seconds since the device (simulator) started.
    public var uptime: Double
    /// `multizone.groups`: the speaker groups the device belongs to
    /// (``MultizoneGroupReference/eurekaJSON``).
    public var groups: [JSONValue] = []
    /// `--replay`: the recorded device's document, served instead of the simulator's own.
    public var recorded: JSONValue?

    public init(name: String, uuid: String, model: String, ipAddress: String, displaySupported: Bool, uptime: Double) {
        self.name = name
        self.uuid = uuid
        self.model = model
        self.ipAddress = ipAddress
        self.displaySupported = displaySupported
        self.uptime = uptime
    }

    /// The uuid in the 8-4-4-4-12 form devices use for `ssdp_udn`.
    public var dashedUUID: String { Multizone.dashed(uuid) }

    /// The full document, keys in alphabetical order as devices send them. The top-level keys
    /// are those of a real device's answer (`Tests/Fixtures/real/eureka-info-*.json`, compared
    /// key path by key path in `RealIdentityTests`); network facts are made-up values of the
    /// same shape (a Wi-Fi device: a locally administered MAC, `hotspot_bssid` with the TXT
    /// `bs` value's `FA:8F:CA` prefix and tail).
    public var json: JSONValue {
        if let recorded { return recorded }
        let tail = Self.macTail(uuid)
        let capabilities: JSONValue = [
            "audio_hdr_supported": false, "display_supported": .bool(displaySupported), "hdmi_prefer_50hz_supported": false,
            "multizone_supported": true,
        ]
        let deviceInfo: JSONValue = [
            "capabilities": capabilities, "cloud_device_id": .string(uuid.uppercased()), "manufacturer": "Google Inc.",
            "model_name": .string(model), "name": .string(name), "product_name": "castline-sim", "ssdp_udn": .string(dashedUUID),
        ]
        let setupStats: JSONValue = [
            "historically_succeeded": true, "num_check_connectivity": 0, "num_connect_wifi": 0, "num_connected_wifi_not_saved": 0,
            "num_initial_eureka_info": 0, "num_obtain_ip": 0,
        ]
        return [
            "bssid": .string("02:ca:57:" + tail.lowercased()), "build_version": "500000", "cast_build_revision": "1.56.500000",
            "closed_caption": [:], "connected": true, "device_info": deviceInfo, "ethernet_connected": false,
            "has_update": false, "hotspot_bssid": .string("FA:8F:CA:" + tail), "ip_address": .string(ipAddress),
            "locale": "en-US", "location": ["country_code": "US", "latitude": 255.0, "longitude": 255.0],
            "mac_address": .string("02:CA:57:" + tail),
            "multizone": ["dynamic_groups": [], "groups": .array(groups), "multichannel_status": ["status": 0]],
            "name": .string(name), "noise_level": -95, "opt_in": ["crash": false, "opencast": false, "stats": false],
            "public_key": .string(Self.publicKeyPlaceholder), "release_track": "stable-channel", "setup_state": 60,
            "setup_stats": setupStats, "signal_level": -45, "ssdp_udn": .string(dashedUUID), "ssid": "castline-sim",
            "time_format": 2, "timezone": "Etc/UTC", "tos_accepted": true, "uptime": .double(uptime), "version": 12,
            "wpa_configured": true, "wpa_id": 0, "wpa_state": 10,
        ]
    }

    /// The last three bytes of the id as `AA:BB:CC` (the TXT `bs` value ends with the same six digits).
    static func macTail(_ uuid: String) -> String {
        let digits = Array(uuid.uppercased().suffix(6))
        guard digits.count == 6 else { return "00:00:00" }
        return "\(String(digits[0..<2])):\(String(digits[2..<4])):\(String(digits[4..<6]))"
    }

    /// Stands for the device's RSA public key (base64 DER on a device); no sender reads it.
    static let publicKeyPlaceholder = "MIIBCgKCAQEAY2FzdGxpbmUgc2ltdWxhdG9yIHB1YmxpYyBrZXkgcGxhY2Vob2xkZXI="

    /// The document for a request's `params` (comma-separated top-level keys); everything when nil or empty.
    public func json(params: String?) -> JSONValue {
        guard let params, !params.isEmpty, case .object(let all) = json else { return json }
        var selected = JSONObject()
        for key in params.split(separator: ",").map({ String($0) }) {
            if let value = all[key] { selected.set(key, value) }
        }
        return .object(selected)
    }
}
