import CastCore

/// What a simulated device got when it fetched the start of a media URL after LOAD
/// (see ``MediaFetcher``). Every field is known only as far as the fetch got: a refused
/// connection has no `status`; a timeout after the head has a `status` and an `error`.
public struct MediaFetchResult: Sendable, Hashable {
    /// The URL as given in the LOAD's `contentId`.
    public var url: String
    /// The response status code; nil when no response head arrived.
    public var status: Int?
    /// The response's `Content-Range` header (`bytes 0-65535/300000`).
    public var contentRange: String?
    /// The response's `Content-Type` header.
    public var contentType: String?
    /// The response's `Access-Control-Allow-Origin` header (CORS: a receiver page needs it for text tracks).
    public var allowOrigin: String?
    /// Body bytes received (at most the requested range length).
    public var bytes: Int
    /// The first body bytes (at most ``prefixLength``): enough to tell media from other bytes.
    public var prefix: [UInt8] = []

    /// How many body bytes ``prefix`` keeps.
    public static let prefixLength = 512
    /// Why the fetch did not complete (`unsupported scheme https`, `timed out after 5.0 s`, a
    /// connect error); nil on success, whatever the status.
    public var error: String?

    /// A result carrying what is known so far.
    public init(url: String, status: Int? = nil, contentRange: String? = nil, contentType: String? = nil,
                bytes: Int = 0, error: String? = nil) {
        self.url = url
        self.status = status
        self.contentRange = contentRange
        self.contentType = contentType
        self.bytes = bytes
        self.error = error
    }

    /// `{"url":…, "status":206, "contentRange":…, "contentType":…, "bytes":65536, "error":null}`
    /// for the control-socket listing; absent values are `null`, keys always present.
    public var jsonValue: JSONValue {
        [
            "url": .string(url),
            "status": status.map { .int(Int64($0)) } ?? .null,
            "contentRange": contentRange.map(JSONValue.string) ?? .null,
            "contentType": contentType.map(JSONValue.string) ?? .null,
            "bytes": .int(Int64(bytes)),
            "error": error.map(JSONValue.string) ?? .null,
        ]
    }
}
