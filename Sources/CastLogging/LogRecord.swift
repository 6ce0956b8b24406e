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
    /// Source location text: kept as the compiler's `StaticString` when it came from a
    /// ``Logger`` call, so building a record costs no allocation; turned into a `String` only when
    /// a sink reads it.
    @usableFromInline var functionText: CodeText
    @usableFromInline var fileText: CodeText
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
        self.functionText = .dynamic(function)
        self.fileText = .dynamic(file)
        self.line = line
        self.message = message
        self.fields = fields
    }

    /// A record whose location comes from `#function` / `#fileID`.
    init(level: LogLevel, className: String, staticFunction: StaticString, staticFile: StaticString, line: UInt,
         message: String, fields: LogFields) {
        self.timestampNanos = LogRecord.now()
        self.level = level
        self.className = className
        self.functionText = .staticText(staticFunction)
        self.fileText = .staticText(staticFile)
        self.line = line
        self.message = message
        self.fields = fields
    }

    /// The emitting function (`#function` form, `start(device:)`).
    public var function: String {
        get { functionText.string }
        set { functionText = .dynamic(newValue) }
    }

    /// The source file in `#fileID` form (`CastProtocol/FrameDecoder.swift`).
    public var file: String {
        get { fileText.string }
        set { fileText = .dynamic(newValue) }
    }

    /// Calls `body` with the file's UTF-8 bytes, without building a `String` for static text.
    @inlinable
    public func withFileUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try fileText.withUTF8(body)
    }

    /// Calls `body` with the function's UTF-8 bytes, without building a `String` for static text.
    @inlinable
    public func withFunctionUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try functionText.withUTF8(body)
    }

    public static func == (a: LogRecord, b: LogRecord) -> Bool {
        a.timestampNanos == b.timestampNanos && a.level == b.level && a.className == b.className
            && a.function == b.function && a.file == b.file && a.line == b.line && a.message == b.message
            && a.fields == b.fields
    }

    /// The current wall-clock time in nanoseconds since the Unix epoch.
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// Text that is either a compile-time constant (no allocation, no reference count) or a `String`.
@usableFromInline
enum CodeText: Sendable {
    case staticText(StaticString)
    case dynamic(String)

    var string: String {
        switch self {
        case .staticText(let s): return s.description
        case .dynamic(let s): return s
        }
    }

    @inlinable
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        switch self {
        case .staticText(let s):
            if s.hasPointerRepresentation { return try body(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)) }
            var text = s.description
            return try text.withUTF8(body)
        case .dynamic(let s):
            if let result = try s.utf8.withContiguousStorageIfAvailable(body) { return result }
            var text = s
            return try text.withUTF8(body)
        }
    }
}
