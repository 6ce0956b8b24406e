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

    /// The full document.
    public var json: JSONValue {
        if let recorded { return recorded }
        let capabilities: JSONValue = [
            "display_supported": .bool(displaySupported), "multizone_supported": true,
            "audio_hdr_supported": false, "hdmi_prefer_50hz_supported": false,
        ]
        let deviceInfo: JSONValue = [
            "name": .string(name), "model_name": .string(model), "manufacturer": "Google Inc.",
            "ssdp_udn": .string(dashedUUID), "cloud_device_id": .string(uuid.uppercased()),
            "capabilities": capabilities, "product_name": "castline-sim",
        ]
        return [
            "name": .string(name), "version": 12, "build_version": "castline-sim",
            "cast_build_revision": "1.56.500000", "ip_address": .string(ipAddress), "locale": "en-US",
            "ssdp_udn": .string(dashedUUID), "setup_state": 60, "uptime": .double(uptime),
            "connected": true, "tos_accepted": true, "device_info": deviceInfo,
            "multizone": ["groups": .array(groups), "dynamic_groups": [], "multichannel_status": ["status": 0]],
        ]
    }

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
