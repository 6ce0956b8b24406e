/// `status` of a RECEIVER_STATUS: running apps and the device volume.
///
/// `applications` is absent or empty when nothing runs; it is encoded only when non-empty (some
/// senders index `applications[0]` whenever the key exists). `isActiveInput` / `isStandBy` exist
/// on video devices only; `userEq` on speakers.
public struct ReceiverStatus: CastPayloadModel, Hashable {
    public var applications: [ApplicationInfo]
    public var isActiveInput: Bool?
    public var isStandBy: Bool?
    /// Device volume.
    public var volume: Volume?
    /// Speaker equaliser, kept as sent.
    public var userEq: JSONValue?

    public init(
        applications: [ApplicationInfo] = [], isActiveInput: Bool? = nil, isStandBy: Bool? = nil,
        volume: Volume? = nil, userEq: JSONValue? = nil
    ) {
        self.applications = applications
        self.isActiveInput = isActiveInput
        self.isStandBy = isStandBy
        self.volume = volume
        self.userEq = userEq
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        self.init()
        for (key, value) in try json.modelObject() {
            switch key {
            case "applications": applications = try value.decodeModels(key.string) ?? []
            case "isActiveInput": isActiveInput = try value.decodeBool(key.string)
            case "isStandBy": isStandBy = try value.decodeBool(key.string)
            case "volume": volume = try value.decodeModel(key.string)
            case "userEq": userEq = value.decodeAny()
            default: break
            }
        }
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(5)
        if !applications.isEmpty { object.put("applications", applications) }
        object.put("isActiveInput", isActiveInput)
        object.put("isStandBy", isStandBy)
        object.put("volume", volume)
        object.put("userEq", userEq)
        return .object(object)
    }

    /// The first app that is not the idle screen, if any.
    public var activeApplication: ApplicationInfo? {
        applications.first { $0.isIdleScreen != true }
    }

    /// The first app with `appId`.
    public func application(withID appID: String) -> ApplicationInfo? {
        applications.first { $0.appID == appID }
    }
}
