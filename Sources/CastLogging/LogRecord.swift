#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One log event: what every sink receives.
///
/// `className` is the emitting type's name (`CastSession`, `CastChannel.com.google.cast.tp.heartbeat`).
/// Immutable value; safe to hand to any thread.
public struct LogRecord: Sendable, Equatable {
    /// Wall-clock time, nanoseconds since the Unix epoch.
    public var timestampNanos: UInt64
    public var level: LogLevel
    public var className: String
    public var function: String
    /// `#fileID` form (`CastProtocol/FrameDecoder.swift`).
    public var file: String
    public var line: UInt
    public var message: String
    public var fields: LogFields

    public init(
        timestampNanos: UInt64 = LogRecord.now(),
        level: LogLevel,
        className: String,
        function: String = "",
        file: String = "",
        line: UInt = 0,
        message: String,
        fields: LogFields = LogFields()
    ) {
        self.timestampNanos = timestampNanos
        self.level = level
        self.className = className
        self.function = function
        self.file = file
        self.line = line
        self.message = message
        self.fields = fields
    }

    /// The current wall-clock time in nanoseconds since the Unix epoch.
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
