/// `detailedErrorCode` of LOAD_FAILED / ERROR (open integer enum).
///
/// Unknown integers are preserved: they decode as themselves and re-encode unchanged.
///
/// Codes from Google's Web Receiver error-code page (as listed by pychromecast and rust-cast).
public struct DetailedErrorCode: OpenIntEnum {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `100` MEDIA_UNKNOWN
    public static let mediaUnknown: DetailedErrorCode = 100
    /// `101` MEDIA_ABORTED
    public static let mediaAborted: DetailedErrorCode = 101
    /// `102` MEDIA_DECODE
    public static let mediaDecode: DetailedErrorCode = 102
    /// `103` MEDIA_NETWORK
    public static let mediaNetwork: DetailedErrorCode = 103
    /// `104` MEDIA_SRC_NOT_SUPPORTED
    public static let mediaSrcNotSupported: DetailedErrorCode = 104
    /// `110` SOURCE_BUFFER_FAILURE
    public static let sourceBufferFailure: DetailedErrorCode = 110
    /// `201` MEDIAKEYS_NETWORK
    public static let mediakeysNetwork: DetailedErrorCode = 201
    /// `202` MEDIAKEYS_UNSUPPORTED
    public static let mediakeysUnsupported: DetailedErrorCode = 202
    /// `203` MEDIAKEYS_WEBCRYPTO
    public static let mediakeysWebcrypto: DetailedErrorCode = 203
    /// `301` SEGMENT_NETWORK
    public static let segmentNetwork: DetailedErrorCode = 301
    /// `311` HLS_NETWORK_MASTER_PLAYLIST
    public static let hlsNetworkMasterPlaylist: DetailedErrorCode = 311
    /// `312` HLS_NETWORK_PLAYLIST
    public static let hlsNetworkPlaylist: DetailedErrorCode = 312
    /// `313` HLS_NETWORK_NO_KEY_RESPONSE
    public static let hlsNetworkNoKeyResponse: DetailedErrorCode = 313
    /// `314` HLS_NETWORK_KEY_LOAD
    public static let hlsNetworkKeyLoad: DetailedErrorCode = 314
    /// `315` HLS_NETWORK_INVALID_SEGMENT
    public static let hlsNetworkInvalidSegment: DetailedErrorCode = 315
    /// `316` HLS_SEGMENT_PARSING
    public static let hlsSegmentParsing: DetailedErrorCode = 316
    /// `321` DASH_NETWORK
    public static let dashNetwork: DetailedErrorCode = 321
    /// `322` DASH_NO_INIT
    public static let dashNoInit: DetailedErrorCode = 322
    /// `331` SMOOTH_NETWORK
    public static let smoothNetwork: DetailedErrorCode = 331
    /// `332` SMOOTH_NO_MEDIA_DATA
    public static let smoothNoMediaData: DetailedErrorCode = 332
    /// `411` HLS_MANIFEST_MASTER
    public static let hlsManifestMaster: DetailedErrorCode = 411
    /// `412` HLS_MANIFEST_PLAYLIST
    public static let hlsManifestPlaylist: DetailedErrorCode = 412
    /// `421` DASH_MANIFEST_NO_PERIODS
    public static let dashManifestNoPeriods: DetailedErrorCode = 421
    /// `422` DASH_MANIFEST_NO_MIMETYPE
    public static let dashManifestNoMimetype: DetailedErrorCode = 422
    /// `423` DASH_INVALID_SEGMENT_INFO
    public static let dashInvalidSegmentInfo: DetailedErrorCode = 423
    /// `431` SMOOTH_MANIFEST
    public static let smoothManifest: DetailedErrorCode = 431
    /// `600` TEXT_UNKNOWN: a text (subtitle) track failed.
    public static let textUnknown: DetailedErrorCode = 600

    public static let knownNames: [(value: Int, name: String)] = [
        (100, "MEDIA_UNKNOWN"),
        (101, "MEDIA_ABORTED"),
        (102, "MEDIA_DECODE"),
        (103, "MEDIA_NETWORK"),
        (104, "MEDIA_SRC_NOT_SUPPORTED"),
        (110, "SOURCE_BUFFER_FAILURE"),
        (201, "MEDIAKEYS_NETWORK"),
        (202, "MEDIAKEYS_UNSUPPORTED"),
        (203, "MEDIAKEYS_WEBCRYPTO"),
        (301, "SEGMENT_NETWORK"),
        (311, "HLS_NETWORK_MASTER_PLAYLIST"),
        (312, "HLS_NETWORK_PLAYLIST"),
        (313, "HLS_NETWORK_NO_KEY_RESPONSE"),
        (314, "HLS_NETWORK_KEY_LOAD"),
        (315, "HLS_NETWORK_INVALID_SEGMENT"),
        (316, "HLS_SEGMENT_PARSING"),
        (321, "DASH_NETWORK"),
        (322, "DASH_NO_INIT"),
        (331, "SMOOTH_NETWORK"),
        (332, "SMOOTH_NO_MEDIA_DATA"),
        (411, "HLS_MANIFEST_MASTER"),
        (412, "HLS_MANIFEST_PLAYLIST"),
        (421, "DASH_MANIFEST_NO_PERIODS"),
        (422, "DASH_MANIFEST_NO_MIMETYPE"),
        (423, "DASH_INVALID_SEGMENT_INFO"),
        (431, "SMOOTH_MANIFEST"),
        (600, "TEXT_UNKNOWN"),
    ]

    /// What the code means for the person who cast, in words (nil for a code not in the table):
    /// Google's Web Receiver error-code page, phrased as what went wrong on the device.
    public var explanation: String? { Self.explanations[rawValue] }

    static let explanations: [Int: String] = [
        100: "the device's player failed without saying why",
        101: "the device stopped fetching the media",
        102: "the device could not decode the media",
        103: "a network error stopped the device fetching the media",
        104: "the device could not load the media: it is unreachable from the device, answers with an HTTP error, or is not in a format the device plays",
        110: "the device's player could not buffer the media",
        201: "the device could not fetch the DRM licence",
        202: "the device does not support the media's DRM system",
        203: "the device's DRM decryption failed",
        301: "the device could not fetch a media segment",
        311: "the device could not fetch the HLS playlist: it is unreachable from the device or answers with an HTTP error",
        312: "the device could not fetch an HLS media playlist",
        313: "the HLS key server did not answer",
        314: "the device could not fetch the HLS key",
        315: "an HLS segment is invalid",
        316: "the device could not parse an HLS segment",
        321: "the device could not fetch the DASH manifest or a segment: unreachable from the device, or an HTTP error",
        322: "the DASH stream has no initialisation segment",
        331: "the device could not fetch the Smooth Streaming media",
        332: "the Smooth Streaming media has no data",
        411: "the HLS URL does not return a playlist the device can read",
        412: "an HLS media playlist cannot be read",
        421: "the DASH manifest cannot be read (no periods)",
        422: "the DASH manifest names no MIME type",
        423: "the DASH manifest's segment information is invalid",
        431: "the Smooth Streaming manifest cannot be read",
        600: "the device could not use a text track: unreachable, without CORS headers, or not WebVTT",
    ]
}
