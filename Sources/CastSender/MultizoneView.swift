import CastCore

/// What a sender knows of a speaker group's members, or of the groups a device plays for, from
/// the `urn:x-cast:com.google.cast.multizone` namespace on `receiver-0`. Pure: messages in,
/// changes out. Value type.
///
/// On a group: `MULTIZONE_STATUS` replaces the member list, `DEVICE_ADDED` / `DEVICE_UPDATED` add
/// or change one member, `DEVICE_REMOVED` drops one (shapes as pychromecast's
/// `controllers/multizone.py` reads them). On any device: `CASTING_GROUPS` lists the groups whose
/// media it plays now, `PLAYBACK_SESSION_UPDATED` adds or drops one.
public struct MultizoneView: Sendable, Equatable {
    /// One member of a group as the group reports it.
    public struct Member: Sendable, Hashable {
        /// 32 lowercase hex digits (the device's mDNS `id`).
        public var id: String
        public var name: String
        /// `IDLE`, `PLAYING`, `LEFT` (left the group's playback: casts on its own); nil when the
        /// group does not say.
        public var playbackState: String?
        /// `LEFT` / `RIGHT` in a stereo pair.
        public var channel: String?

        public init(id: String, name: String, playbackState: String? = nil, channel: String? = nil) {
            self.id = id
            self.name = name
            self.playbackState = playbackState
            self.channel = channel
        }

        /// Left the group's playback.
        public var hasLeft: Bool { playbackState == "LEFT" }
    }

    /// A group a device plays for.
    public struct Group: Sendable, Hashable {
        /// 32 lowercase hex digits.
        public var id: String
        public var name: String

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    public enum Change: Sendable, Equatable {
        case memberAdded(Member)
        case memberRemoved(Member)
        case memberChanged(Member)
        /// A member left the group's playback (its own sender cast on it).
        case memberLeftPlayback(Member)
        case castingGroupsChanged([Group])
    }

    /// A group's members (empty on a device that is no group, or before the first status).
    public private(set) var members: [Member] = []
    /// A stereo pair is in the group.
    public private(set) var isMultichannel = false
    /// The groups this device plays for now.
    public private(set) var castingGroups: [Group] = []
    /// A MULTIZONE_STATUS has been received.
    public private(set) var hasStatus = false

    public init() {}

    /// Applies one multizone message; returns what changed (nothing for unknown types).
    public mutating func apply(_ json: JSONValue) -> [Change] {
        switch json["type"]?.string {
        case "MULTIZONE_STATUS":
            let devices = json["status"]?["devices"]?.array ?? []
            let fresh = devices.compactMap(Self.member)
            isMultichannel = json["status"]?["isMultichannel"]?.bool ?? false
            hasStatus = true
            var changes: [Change] = []
            for old in members where !fresh.contains(where: { $0.id == old.id }) { changes.append(.memberRemoved(old)) }
            for new in fresh {
                if let old = members.first(where: { $0.id == new.id }) {
                    if old != new { changes.append(contentsOf: Self.changes(from: old, to: new)) }
                } else {
                    changes.append(.memberAdded(new))
                }
            }
            members = fresh
            return changes
        case "DEVICE_ADDED", "DEVICE_UPDATED":
            guard let device = json["device"], let new = Self.member(device) else { return [] }
            if let index = members.firstIndex(where: { $0.id == new.id }) {
                let old = members[index]
                members[index] = new
                return old == new ? [] : Self.changes(from: old, to: new)
            }
            members.append(new)
            return [.memberAdded(new)]
        case "DEVICE_REMOVED":
            guard let id = json["deviceId"]?.string.map(Self.plain), let index = members.firstIndex(where: { $0.id == id }) else {
                return []
            }
            return [.memberRemoved(members.remove(at: index))]
        case "CASTING_GROUPS":
            let groups = (json["status"]?["groups"]?.array ?? []).compactMap(Self.group)
            guard groups != castingGroups else { return [] }
            castingGroups = groups
            return [.castingGroupsChanged(groups)]
        case "PLAYBACK_SESSION_UPDATED":
            guard let session = json["playbackSession"], let group = session["group"].flatMap(Self.group) else { return [] }
            var groups = castingGroups.filter { $0.id != group.id }
            if session["isPlaying"]?.bool == true { groups.append(group) }
            guard groups != castingGroups else { return [] }
            castingGroups = groups
            return [.castingGroupsChanged(groups)]
        default:
            return []
        }
    }

    static func changes(from old: Member, to new: Member) -> [Change] {
        if new.hasLeft, !old.hasLeft { return [.memberLeftPlayback(new)] }
        return [.memberChanged(new)]
    }

    static func member(_ json: JSONValue) -> Member? {
        guard let id = json["deviceId"]?.string, !id.isEmpty else { return nil }
        return Member(id: plain(id), name: json["name"]?.string ?? "", playbackState: json["playbackState"]?.string,
                      channel: json["channelSelection"]?.string)
    }

    static func group(_ json: JSONValue) -> Group? {
        guard let id = (json["groupId"] ?? json["uuid"])?.string, !id.isEmpty else { return nil }
        return Group(id: plain(id), name: json["name"]?.string ?? "")
    }

    /// `01234567-89ab-…` → `0123456789ab…` (mDNS ids have no dashes).
    static func plain(_ id: String) -> String { String(id.lowercased().filter { $0 != "-" }) }
}
