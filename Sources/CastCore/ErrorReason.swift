/// `reason` of LAUNCH_ERROR / INVALID_REQUEST / ERROR replies (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
///
/// Receiver-namespace values come from openscreen; the CAF media values beyond the first four are from memory.
public struct ErrorReason: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `INVALID_COMMAND`: Unknown message type or missing `requestId`.
    public static let invalidCommand: ErrorReason = "INVALID_COMMAND"
    /// `INVALID_SESSION_ID`: STOP named a session that does not exist.
    public static let invalidSessionID: ErrorReason = "INVALID_SESSION_ID"
    /// `INVALID_MEDIA_SESSION_ID`: The `mediaSessionId` is not the current one.
    public static let invalidMediaSessionID: ErrorReason = "INVALID_MEDIA_SESSION_ID"
    /// `INVALID_PARAMS`: Parameters are missing or malformed.
    public static let invalidParams: ErrorReason = "INVALID_PARAMS"
    /// `BAD_PARAMETER`: LAUNCH/STOP parameter rejected.
    public static let badParameter: ErrorReason = "BAD_PARAMETER"
    /// `NOT_FOUND`: App id unknown to the device.
    public static let notFound: ErrorReason = "NOT_FOUND"
    /// `SYSTEM_ERROR`: Device-side failure.
    public static let systemError: ErrorReason = "SYSTEM_ERROR"
    /// `CANCELLED`: The request was cancelled.
    public static let cancelled: ErrorReason = "CANCELLED"
    /// `DUPLICATE_REQUEST_ID`: The `requestId` is already in flight.
    public static let duplicateRequestID: ErrorReason = "DUPLICATE_REQUEST_ID"
    /// `NOT_SUPPORTED`: The receiver does not support the command.
    public static let notSupported: ErrorReason = "NOT_SUPPORTED"
    /// `SKIP_LIMIT_REACHED`: No more skips allowed.
    public static let skipLimitReached: ErrorReason = "SKIP_LIMIT_REACHED"
    /// `END_OF_QUEUE`: No next/previous item.
    public static let endOfQueue: ErrorReason = "END_OF_QUEUE"
    /// `LANGUAGE_NOT_SUPPORTED`: Requested track language not available.
    public static let languageNotSupported: ErrorReason = "LANGUAGE_NOT_SUPPORTED"
    /// `APP_ERROR`: The receiver app reported an error.
    public static let appError: ErrorReason = "APP_ERROR"
    /// `GENERIC_LOAD_ERROR`: Loading failed for an unspecified reason.
    public static let genericLoadError: ErrorReason = "GENERIC_LOAD_ERROR"

    public static let knownValues: [ErrorReason] = [
        .invalidCommand, .invalidSessionID, .invalidMediaSessionID, .invalidParams, .badParameter, .notFound, .systemError, .cancelled, .duplicateRequestID, .notSupported, .skipLimitReached, .endOfQueue, .languageNotSupported, .appError, .genericLoadError,
    ]
}
