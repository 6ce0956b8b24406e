#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process that wrote a record: its `pid` and its role. The sinks that leave the process
/// (the JSON and journald plugins, any plugin sink) add both to every record that does not carry
/// them yet, so records of a daemon, a CLI command and a plugin's helper process that share a
/// file stay apart (`castline logs` pairs sessions and draws lanes per process). The console
/// does not print them. Value type.
public struct LogProcess: Sendable, Equatable {
    /// The record field names.
    public static let pidField = "pid"
    public static let roleField = "role"

    /// What a castline process is.
    public enum Role: String, Sendable, CaseIterable {
        /// `castline run`.
        case daemon
        /// Any other `castline` command (its direct mode included).
        case cli
        /// `castline plugin-host`: an isolated plugin's helper process.
        case pluginHelper = "plugin-helper"
        /// `castline sim`.
        case simulator
        /// A program that embeds the framework and set nothing else.
        case embedded
    }

    public var pid: Int32
    public var role: String

    public init(pid: Int32 = getpid(), role: Role) {
        self.pid = pid
        self.role = role.rawValue
    }

    public init(pid: Int32, role: String) {
        self.pid = pid
        self.role = role
    }

    /// This process, as a program that embeds the framework.
    public static var current: LogProcess { LogProcess(role: .embedded) }

    /// True when `fields` already name a process (a record forwarded from another process).
    @inlinable
    public static func isNamed(in fields: LogFields) -> Bool {
        var found = false
        fields.forEachField { key, _ in if !found, key.utf8.count == 3, key == pidField { found = true } }
        return found
    }
}
