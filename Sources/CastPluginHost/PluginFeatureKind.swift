internal import CCastPluginABI

/// What a plugin feature provides (`castline_feature_kind`).
public enum PluginFeatureKind: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    case discovery = 1
    case channel = 2
    case mediaFormat = 3
    case logSink = 4
    /// Since ABI 1.1: carries the control API and the event stream elsewhere (``PluginBridge``).
    case bridge = 5

    /// The name used in logs, `plugins list` and configs (`log_sink`).
    public var description: String {
        switch self {
        case .discovery: return "discovery"
        case .channel: return "channel"
        case .mediaFormat: return "media_format"
        case .logSink: return "log_sink"
        case .bridge: return "bridge"
        }
    }
}

/// The ABI version this host speaks.
package enum PluginABI {
    package static let major = UInt32(CASTLINE_PLUGIN_ABI_MAJOR)
    package static let minor = UInt32(CASTLINE_PLUGIN_ABI_MINOR)
    /// The exported symbol every plugin of this major provides.
    package static let entrySymbol = CASTLINE_PLUGIN_ENTRY_SYMBOL
    /// The minor that introduced each feature kind: a plugin built for an older minor cannot declare it.
    static func minimumMinor(of kind: PluginFeatureKind) -> UInt32 { kind == .bridge ? 1 : 0 }
    /// The entry symbol of another major (`castline_plugin_v2_describe`): used to explain a refusal.
    static func entrySymbol(major: Int) -> String { "castline_plugin_v\(major)_describe" }
}
