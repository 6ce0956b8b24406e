import CastCore
import CastTransport

/// A Cast device as discovery reports it: what to connect to and what to show.
///
/// `id` is the device's stable identity (mDNS TXT `id`, the uuid in the TLS certificate's common
/// name for the simulator); two reports with the same id are the same device. Value type.
public struct CastDevice: Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var friendlyName: String
    public var host: String
    public var port: Int
    /// `md` (e.g. "Chromecast Ultra"); empty when unknown.
    public var modelName: String
    /// App ids the device is known to run or support (mDNS `_<APPID>._sub` subtypes,
    /// GET_APP_AVAILABILITY answers). Empty = unknown.
    public var supportedAppIDs: Set<String>
    /// App ids the device answered it cannot run (GET_APP_AVAILABILITY: APP_UNAVAILABLE).
    public var unavailableAppIDs: Set<String>
    /// `st` / receiver status text: what the device shows right now, when discovery knows it.
    public var statusText: String?
    /// Which provider reported it (`static`, `avahi`, …).
    public var provider: String
    /// mDNS `ca` bits; nil when the provider does not know them (static hosts).
    public var capabilities: CastDeviceCapabilities?
    /// Every address the device was seen at (IPv4 and IPv6), `host` first; empty when only `host` is known.
    public var addresses: [String] = []
    /// A speaker group's members, when asked (``MultizoneProbe``, a group session's status);
    /// empty for a device, or a group not asked yet.
    public var groupMembers: [MultizoneView.Member] = []

    /// The model name speaker groups announce.
    public static let groupModelName = "Google Cast Group"

    /// A speaker group (model `Google Cast Group`): its own endpoint on the leader's address, at
    /// a port other than 8009, which moves when the leader changes.
    public var isGroup: Bool { modelName == Self.groupModelName }

    /// Whether the device may be a speaker group though its model does not say so: reached on
    /// a port other than 8009 with no model known (pychromecast takes every such endpoint for a
    /// group). Its session asks it for members (multizone GET_STATUS); a device alone lists none.
    public var mayBeGroup: Bool { isGroup || (modelName.isEmpty && port != 8009) }

    public init(id: String, friendlyName: String, host: String, port: Int = 8009, modelName: String = "",
                supportedAppIDs: Set<String> = [], unavailableAppIDs: Set<String> = [], statusText: String? = nil, provider: String = "static") {
        self.id = id
        self.friendlyName = friendlyName
        self.host = host
        self.port = port
        self.modelName = modelName
        self.supportedAppIDs = supportedAppIDs
        self.unavailableAppIDs = unavailableAppIDs
        self.statusText = statusText
        self.provider = provider
    }

    /// `host:port` (IPv6 in brackets), as in logs.
    public var endpoint: String { HostPort.name(host: host, port: port) }

    public var description: String { "\(friendlyName) (\(id) at \(endpoint))" }
}
