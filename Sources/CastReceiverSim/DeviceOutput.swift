import CastProtocol

/// What the state machine asks the server to do. Outputs are in order; the server performs them
/// one after the other.
public enum DeviceOutput: Sendable, Equatable {
    /// Frame `message` and write it on TCP connection `to`.
    case send(CastMessage, to: SenderConnectionID)
    /// Close the TCP connection (reboot).
    case closeConnection(SenderConnectionID, reason: String)
    /// Republish the mDNS TXT record (`st`, `rs`) and app subtypes.
    case advertisementChanged(DeviceAdvertisementState)
    /// Fetch the media of a LOAD and report the outcome with
    /// ``ReceiverDevice/mediaChecked(mediaSessionID:failure:reason:now:)``; the LOAD's reply waits.
    case checkMedia(MediaCheckRequest)
    /// A LOAD's media is not fetched (not on a loopback `http://` URL): it plays unchecked.
    case mediaNotChecked(url: String)
    /// The device's own sender cast on it: it no longer plays these groups' media (the
    /// simulator tells the groups' endpoints).
    case leftGroupPlayback(groupUUIDs: [String])
}

/// The advertised busy state: `st` and `rs` of the TXT record.
public struct DeviceAdvertisementState: Sendable, Equatable {
    /// `st=1`: a (non idle-screen) app runs.
    public var busy: Bool
    /// `rs`: the running app's status text; empty when idle.
    public var statusText: String
    /// The running app, idle screen included; nil when nothing runs.
    public var runningAppID: String?

    public init(busy: Bool, statusText: String, runningAppID: String?) {
        self.busy = busy
        self.statusText = statusText
        self.runningAppID = runningAppID
    }

    /// Nothing runs.
    public static let idle = DeviceAdvertisementState(busy: false, statusText: "", runningAppID: nil)
}

extension DeviceOutput {
    /// The message when this is `.send`.
    public var message: CastMessage? {
        if case .send(let message, _) = self { return message }
        return nil
    }

    /// The connection a `.send` goes to.
    public var connection: SenderConnectionID? {
        switch self {
        case .send(_, let id): return id
        case .closeConnection(let id, _): return id
        case .advertisementChanged, .checkMedia, .mediaNotChecked, .leftGroupPlayback: return nil
        }
    }
}
