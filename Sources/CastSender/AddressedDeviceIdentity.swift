import CastTransport

/// What a device reached by address is (a `devices:` entry, `--device HOST[:PORT]`), from what
/// it says about itself in eureka_info, as mDNS discovery learns it from the TXT record (`id`,
/// `fn`, `md`, `ca`). Pure.
///
/// eureka_info at a host describes the device that owns the address, so it applies to:
/// - the Cast port 8009, or an endpoint whose TLS certificate names the id eureka_info gives:
///   that device — its id, name, model and capabilities (video out when it has a screen, as
///   pychromecast's `get_cast_type` reads `display_supported`);
/// - another port that the device leads a speaker group at (its `multizone.groups` entry with
///   `elected_leader: "self"` and that `cast_port`): the group — its uuid, name, model
///   `Google Cast Group` and the multizone-group capability;
/// - any other port: nothing (something else listens there; pychromecast takes it for a
///   group, which the session then asks: ``CastDevice/mayBeGroup``).
///
/// What the config says wins: a configured name and id are kept, and `devices[].model`
/// replaces the model eureka_info gives.
public enum AddressedDeviceIdentity {
    /// The Cast port of a device itself; a group's endpoint is on another port of its leader.
    public static let devicePort = 8009

    /// `device` with what `info` (eureka_info of `device.host`, nil when it gave none) says
    /// about its endpoint. `keepName` / `keepID`: the name / id were configured; `model`: the
    /// configured model, which wins; `certificateID`: the common name of the certificate the
    /// endpoint presented, when a connection was made.
    public static func identify(_ device: CastDevice, eureka info: EurekaDeviceInfo?, keepName: Bool, keepID: Bool,
                                model: String?, certificateID: String? = nil) -> CastDevice {
        var identified = device
        if let info {
            if describesItself(device, eureka: info, certificateID: certificateID) {
                if !keepID, let id = info.id { identified.id = id }
                if !keepName, let name = info.name { identified.friendlyName = name }
                if let model = info.model { identified.modelName = model }
                var capabilities: CastDeviceCapabilities = [.audioOut]
                if info.displaySupported ?? true { capabilities.insert(.videoOut) }
                identified.capabilities = capabilities
            } else if let group = info.group(ledAt: device.port) {
                if !keepID { identified.id = group.id }
                if !keepName { identified.friendlyName = group.name }
                identified.modelName = CastDevice.groupModelName
                identified.capabilities = [.audioOut, .multizoneGroup]
            }
        }
        if let model, !model.isEmpty { identified.modelName = model }
        return identified
    }

    /// Whether eureka_info describes the endpoint itself: the Cast port, or a certificate that
    /// names the same id (a device on another port, as the simulator's `--layout ports` puts them).
    static func describesItself(_ device: CastDevice, eureka info: EurekaDeviceInfo, certificateID: String?) -> Bool {
        if device.port == devicePort { return true }
        guard let certificateID, let id = info.id else { return false }
        return certificateID.lowercased().filter { $0 != "-" } == id
    }

    /// Where each part of `device`'s identity came from, for a log line: `model "Google Nest
    /// Hub" from eureka_info`, `a speaker group led by 10.0.0.5`.
    public static func summary(_ device: CastDevice, eureka info: EurekaDeviceInfo?, model: String?) -> String {
        let modelText = device.modelName.isEmpty ? "no model" : "model \"\(device.modelName)\""
        let source: String
        if let model, !model.isEmpty {
            source = "devices[].model"
        } else if info == nil {
            source = "no eureka_info answer"
        } else if device.port != devicePort, device.isGroup {
            source = "a speaker group led by \(device.host) (its eureka_info multizone.groups)"
        } else if device.port != devicePort, device.modelName.isEmpty {
            source = "eureka_info of \(device.host) names no group at port \(device.port)"
        } else {
            source = "eureka_info"
        }
        return "\(modelText) (\(source))"
    }
}
