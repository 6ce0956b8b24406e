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
    /// keys (except the live `st` and `rs`).
    public var recordedTXT: [String: String] = [:]

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
        return own.map { entry in
            let key = String(entry.prefix { $0 != "=" })
            guard key != "st", key != "rs", let value = recordedTXT[key] else { return entry }
            return "\(key)=\(value)"
        }
    }

    /// `_<APPID>._sub._googlecast._tcp` for every installed app whose id is a valid DNS label.
    public var subtypes: [String] {
        appIDs.filter { id in !id.isEmpty && id.utf8.count <= 62 && id.utf8.allSatisfy { $0 != UInt8(ascii: ".") } }
            .map { "_\($0)._sub.\(Self.serviceType)" }
    }
}
