/// A volume: the device volume in RECEIVER_STATUS, a stream volume in MEDIA_STATUS, or the
/// target of SET_VOLUME (send either `level` or `muted`).
///
/// Devices report float32-rounded levels (`0.44999998807907104`); compare with a tolerance.
public struct Volume: CastPayloadModel, JSONSourceDecodable, Hashable {
    /// 0…1.
    public var level: Double?
    public var muted: Bool?
    /// Device volume only.
    public var controlType: VolumeControlType?
    /// Device volume only: the step of one volume-key press.
    public var stepInterval: Double?

    public init(level: Double? = nil, muted: Bool? = nil, controlType: VolumeControlType? = nil, stepInterval: Double? = nil) {
        self.level = level
        self.muted = muted
        self.controlType = controlType
        self.stepInterval = stepInterval
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        try self.init(source: json)
    }

    init<Source: JSONDecodingSource>(source json: Source) throws(CastPayloadError) {
        self.init()
        for (key, value) in try json.modelObject() {
            switch key {
            case "level": level = try value.decodeDouble("level")
            case "muted": muted = try value.decodeBool("muted")
            case "controlType": controlType = try value.decodeEnum("controlType")
            case "stepInterval": stepInterval = try value.decodeDouble("stepInterval")
            default: break
            }
        }
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(4)
        object.put("controlType", controlType)
        object.put("level", level)
        object.put("muted", muted)
        object.put("stepInterval", stepInterval)
        return .object(object)
    }
}
