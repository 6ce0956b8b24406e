import CastLogging
import CastPluginHost
import CastTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A plugin host with a private log system whose records a test can read, and a scratch folder.
struct PluginHostRig {
    let host: PluginHost
    let logSystem: LogSystem
    let logs: MemoryLogSink

    init(paths: [String] = [], _ adjust: (inout PluginHostConfiguration) -> Void = { _ in }) throws {
        (logSystem, logs) = try MemoryLogSink.makeSystem("", minimum: .debug)
        var configuration = PluginHostConfiguration(searchPath: PluginSearchPath(commandLine: paths, executableFolder: nil))
        adjust(&configuration)
        host = PluginHost(configuration: configuration, logSystem: logSystem)
    }

    /// Error records of class PluginHost.
    var hostErrors: [LogRecord] {
        logSystem.flush()
        return logs.records.filter { $0.className == "PluginHost" && $0.level == .error }
    }

    var hostWarnings: [LogRecord] {
        logSystem.flush()
        return logs.records.filter { $0.className == "PluginHost" && $0.level == .warning }
    }

    func records(class className: String) -> [LogRecord] {
        logSystem.flush()
        return logs.records.filter { $0.className == className }
    }
}

