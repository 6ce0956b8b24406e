/// An artwork image of ``MediaMetadata`` (`images[]`).
public struct Image: CastPayloadModel, Hashable {
    public var url: String
    public var width: Int?
    public var height: Int?

    public init(url: String, width: Int? = nil, height: Int? = nil) {
        self.url = url
        self.width = width
        self.height = height
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var url: String?
        for (key, value) in try json.modelObject() {
            switch key {
            case "url": url = try value.decodeString(key.string)
            case "width": width = try value.decodeInt(key.string)
            case "height": height = try value.decodeInt(key.string)
            default: break
            }
        }
        self.url = try requireKey(url, "url")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(3)
        object.put("url", url)
        object.put("width", width)
        object.put("height", height)
        return .object(object)
    }
}
