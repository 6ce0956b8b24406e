/// A logger for one class: the emitting type's name (`CastSession`, `DiscoveryManager`,
/// `CastChannel.com.google.cast.tp.heartbeat`).
///
/// Captures function, file and line automatically; the message and fields are `@autoclosure`s
/// that are never evaluated when the level is filtered out. A disabled statement costs one cached
/// threshold compare. Value type; `Sendable`; cheap to copy.
///
/// ```swift
/// let log = Logger(for: CastSession.self)
/// log.info("session started", ["device": "\(device.id)", "session": "\(id)"])
/// ```
public struct Logger: Sendable {
    @usableFromInline let handle: LogClassHandle
    @usableFromInline let baseFields: LogFields

    /// A logger for the class named `className` in `system`.
    public init(class className: String, system: LogSystem = .shared) {
        handle = system.handle(forClass: className)
        baseFields = LogFields()
    }

    /// A logger named after `type` (`String(describing: type)`).
    public init<T>(for type: T.Type, system: LogSystem = .shared) {
        self.init(class: String(describing: type), system: system)
    }

    private init(handle: LogClassHandle, baseFields: LogFields) {
        self.handle = handle
        self.baseFields = baseFields
    }

    /// The class name records carry.
    public var className: String { handle.className }

    /// A logger that adds `fields` to every record (e.g. the device and session ids).
    public func with(_ fields: LogFields) -> Logger {
        Logger(handle: handle, baseFields: baseFields.merging(fields))
    }

    /// True when a statement at `level` in `function` would pass the level check.
    @inlinable
    public func isEnabled(_ level: LogLevel, function: StaticString = #function) -> Bool {
        let state = handle.state()
        guard level.rawValue >= UInt8(truncatingIfNeeded: state) else { return false }
        if state & LogClassHandle.exactFlag != 0 { return true }
        return level.rawValue >= handle.rank(forFunction: function)
    }

    /// Logs `message` at `level`.
    @inlinable
    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) {
        let state = handle.state()
        guard level.rawValue >= UInt8(truncatingIfNeeded: state) else { return }
        let recordFields = baseFields.isEmpty ? fields() : baseFields.merging(fields())
        handle.emit(level, state: state, message: message(), fields: recordFields, function: function, file: file, line: line)
    }

    @inlinable
    public func verbose(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) { log(.verbose, message(), fields(), function: function, file: file, line: line) }

    @inlinable
    public func debug(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) { log(.debug, message(), fields(), function: function, file: file, line: line) }

    @inlinable
    public func info(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) { log(.info, message(), fields(), function: function, file: file, line: line) }

    @inlinable
    public func warning(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) { log(.warning, message(), fields(), function: function, file: file, line: line) }

    @inlinable
    public func error(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) { log(.error, message(), fields(), function: function, file: file, line: line) }

    /// Logs an assertion failure (GCK `assert` level). Does not stop the program.
    @inlinable
    public func assertionFailure(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) { log(.assert, message(), fields(), function: function, file: file, line: line) }
}
