import CastCore

/// Speaker groups (multizone): what a group endpoint knows about its members, and what a member
/// knows about the groups it belongs to. Pure values; ``ReceiverDevice`` answers the
/// `urn:x-cast:com.google.cast.multizone` namespace on `receiver-0` from them.
///
/// Message shapes follow pychromecast's `controllers/multizone.py`: `MULTIZONE_STATUS
/// {status: {devices: [{deviceId, name, …}]}}`, `DEVICE_ADDED` / `DEVICE_UPDATED {device}`,
/// `DEVICE_REMOVED {deviceId}`, `CASTING_GROUPS`, `PLAYBACK_SESSION_UPDATED`. `deviceId` is the
/// dashed uuid (pychromecast's `str(UUID)`, which `MultizoneManager` keys members by).
public enum MultizonePlayback: String, Sendable, Equatable {
    /// The group plays nothing.
    case idle
    /// The member plays the group's media.
    case playing
    /// The group plays, but the member left its playback (it casts on its own).
    case left
}

/// One member in a group's status.
public struct MultizoneMember: Sendable, Equatable {
    /// 32 lowercase hex digits.
    public var uuid: String
    public var name: String
    /// `ca` bits of the member.
    public var capabilities: Int
    public var playback: MultizonePlayback = .idle
    /// `LEFT` / `RIGHT` for the two speakers of a stereo pair; nil otherwise.
    public var channel: String?

    public init(uuid: String, name: String, capabilities: Int, playback: MultizonePlayback = .idle, channel: String? = nil) {
        self.uuid = uuid
        self.name = name
        self.capabilities = capabilities
        self.playback = playback
        self.channel = channel
    }

    /// The entry of `status.devices` and of `DEVICE_ADDED` / `DEVICE_UPDATED`.
    public var json: JSONValue {
        var entry: JSONObject = [
            "deviceId": .string(Multizone.dashed(uuid)), "name": .string(name), "capabilities": .int(Int64(capabilities)),
            "playbackState": .string(playback.rawValue.uppercased()),
        ]
        if let channel { entry.set("channelSelection", .string(channel)) }
        return .object(entry)
    }
}

/// A group a device belongs to, as the member sees it.
public struct MultizoneGroupReference: Sendable, Equatable {
    /// 32 lowercase hex digits.
    public var uuid: String
    public var name: String
    /// The group endpoint (the leader's address and the group's port).
    public var leaderAddress: String
    public var leaderPort: Int
    /// This device leads the group (eureka_info `elected_leader: "self"`).
    public var isLeader: Bool

    public init(uuid: String, name: String, leaderAddress: String, leaderPort: Int, isLeader: Bool) {
        self.uuid = uuid
        self.name = name
        self.leaderAddress = leaderAddress
        self.leaderPort = leaderPort
        self.isLeader = isLeader
    }

    /// The entry of a `CASTING_GROUPS` / `PLAYBACK_SESSION_UPDATED` message and of `list`.
    public var json: JSONValue {
        ["groupId": .string(Multizone.dashed(uuid)), "name": .string(name),
         "leader": .string("\(leaderAddress):\(leaderPort)")]
    }

    /// The entry of eureka_info's `multizone.groups`, as pychromecast's `get_multizone_status` reads it.
    public var eurekaJSON: JSONValue {
        var entry: JSONObject = ["name": .string(name), "uuid": .string(Multizone.dashed(uuid)), "multichannel_group": false]
        if isLeader {
            entry.set("elected_leader", "self")
            entry.set("cast_port", .int(Int64(leaderPort)))
        } else {
            entry.set("elected_leader", .string("\(leaderAddress):\(leaderPort)"))
        }
        return .object(entry)
    }
}

/// A group endpoint's members and their playback.
public struct MultizoneGroupState: Sendable, Equatable {
    public var members: [MultizoneMember]
    /// A stereo pair is in the group (`isMultichannel`).
    public var isMultichannel: Bool

    public init(members: [MultizoneMember], isMultichannel: Bool = false) {
        self.members = members
        self.isMultichannel = isMultichannel
    }

    /// The `status` object of MULTIZONE_STATUS.
    public var statusJSON: JSONValue {
        ["devices": .array(members.map(\.json)), "isMultichannel": .bool(isMultichannel)]
    }
}

/// The groups a device belongs to and the ones whose media it plays now.
public struct MultizoneMemberships: Sendable, Equatable {
    public var groups: [MultizoneGroupReference] = []
    /// Groups whose playback this device follows now (a subset of `groups`, by uuid).
    public var casting: [String] = []

    public init() {}

    public var castingGroups: [MultizoneGroupReference] { groups.filter { casting.contains($0.uuid) } }
}

/// Message builders and names of the multizone namespace.
public enum Multizone {
    public static let getStatus = "GET_STATUS"
    public static let getCastingGroups = "GET_CASTING_GROUPS"
    public static let status = "MULTIZONE_STATUS"
    public static let castingGroups = "CASTING_GROUPS"
    public static let deviceAdded = "DEVICE_ADDED"
    public static let deviceUpdated = "DEVICE_UPDATED"
    public static let deviceRemoved = "DEVICE_REMOVED"
    public static let sessionUpdated = "PLAYBACK_SESSION_UPDATED"
    /// The model name groups announce (`md`).
    public static let groupModel = "Google Cast Group"

    /// `0123…` → `01234567-89ab-cdef-0123-456789abcdef`; other text unchanged.
    public static func dashed(_ uuid: String) -> String {
        let hex = Array(uuid.lowercased())
        guard hex.count == 32 else { return uuid }
        let cuts = [0, 8, 12, 16, 20, 32]
        return (0..<5).map { String(hex[cuts[$0]..<cuts[$0 + 1]]) }.joined(separator: "-")
    }

    static func message(_ type: String, requestID: RequestID, _ fields: JSONObject) -> JSONValue {
        var object = fields
        object.set("type", .string(type))
        object.set("requestId", .int(Int64(requestID.rawValue)))
        return .object(object)
    }
}
