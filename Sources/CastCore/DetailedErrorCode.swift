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
    ]
}
