/// What one simulated device announces over DNS-SD, in the shape real Cast devices use.
///
/// Service `_googlecast._tcp` named `<model>-<id>`, on host `<id>.local`, TXT `id cd rm ve md ic fn
/// ca st bs nf rs`, plus one `_<APPID>._sub._googlecast._tcp` subtype per installed app.
/// Value type; `Sendable`.
public struct MDNSAdvertisement: Sendable, Equatable {
    public var configuration: SimulatedDeviceConfiguration
    /// `st=1` while an app runs.
    public var busy: Bool
    /// `rs`: the running app's status text; empty when idle.
    public var statusText: String
    /// Installed apps (one subtype each).
    public var appIDs: [String]
    /// `--replay`: the recorded device's TXT values, which replace the simulator's for the same
    /// keys (`st` and `rs` only while ``keepsRecordedStatus``).
    public var recordedTXT: [String: String] = [:]
    /// `--replay` of a capture that holds the device's whole record (`txtComplete`): its keys in
    /// the recorded order. The record is then advertised as recorded, key for key, and none of
    /// the simulator's own keys is added.
    public var recordedTXTOrder: [String]?
    /// Advertise the recorded `st` and `rs` (the replayed device has not run an app of its own
    /// yet); false: the live values.
    public var keepsRecordedStatus = false

    public static let serviceType = "_googlecast._tcp"

    public var instanceName: String { configuration.instanceName }
    public var hostName: String { "\(configuration.uuid).local" }

    /// The TXT strings, in the order real devices send them.
    public var txt: [String] {
        let c = configuration
        let tail = String(c.uuid.uppercased().suffix(6))
        let own = [
            "id=\(c.uuid)", "cd=\(c.uuid.uppercased())", "rm=", "ve=05", "md=\(c.model)", "ic=/setup/icon.png",
            "fn=\(c.name)", "ca=\(c.capabilityBits)", "st=\(busy ? 1 : 0)", "bs=FA8FCA\(tail)", "nf=1",
            "rs=\(statusText)",
        ]
        guard !recordedTXT.isEmpty else { return own }
        let live = ["st": busy ? "1" : "0", "rs": statusText]
        func value(_ key: String) -> String? {
            if !keepsRecordedStatus, let current = live[key] { return current }
            return recordedTXT[key]
        }
        if let order = recordedTXTOrder {
            return order.compactMap { key in value(key).map { "\(key)=\($0)" } }
        }
        return own.map { entry in
            let key = String(entry.prefix { $0 != "=" })
            guard let recorded = value(key) else { return entry }
            return "\(key)=\(recorded)"
        }
    }

    /// `_<APPID>._sub._googlecast._tcp` for every installed app whose id is a valid DNS label.
    public var subtypes: [String] {
        appIDs.filter { id in !id.isEmpty && id.utf8.count <= 62 && id.utf8.allSatisfy { $0 != UInt8(ascii: ".") } }
            .map { "_\($0)._sub.\(Self.serviceType)" }
    }
}
