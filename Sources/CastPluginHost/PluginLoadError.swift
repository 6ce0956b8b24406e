/// Why a plugin file was not loaded or a plugin/feature was disabled. Each case renders as one
/// line that names the file and says what to do.
public struct PluginLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable {
        case unsafeFile = "unsafe_file"
        case openFailed = "open_failed"
        case missingEntry = "missing_entry"
        case abiMajor = "abi_major"
        case abiMinor = "abi_minor"
        case badDescriptor = "bad_descriptor"
        case initFailed = "init_failed"
        /// The plugin crashed (a signal) while it was scanned in a child process.
        case crashed
        /// The plugin did not return from a call within its bound.
        case timedOut = "timed_out"
        case duplicate
        case undeclared
        case notAllowed = "not_allowed"
        case disabled
    }

    package var kind: Kind
    /// The plugin file (or folder) concerned.
    package var path: String
    /// The plugin id when it is known.
    package var pluginID: String?
    package var reason: String

    package init(_ kind: Kind, path: String, pluginID: String? = nil, _ reason: String) {
        self.kind = kind
        self.path = path
        self.pluginID = pluginID
        self.reason = reason
    }

    public var description: String {
        if let pluginID { return "plugin \(pluginID) (\(path)): \(reason)" }
        return "plugin \(path): \(reason)"
    }
}
