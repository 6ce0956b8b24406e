internal import CCastPluginABI

/// A plugin that passed the loader's checks: its descriptor copied into host-sized structs.
package struct LoadedPlugin: Sendable {
    package let path: String
    package let id: String
    package let version: String
    package let summary: String
    package let license: String
    package let abiMinor: UInt32
    package let features: [PluginFeature]
    /// Features the loader refused (bad vtable, unknown kind…); the plugin's other features still load.
    package let refusedFeatures: [PluginLoadError]
    let entry: PluginEntryPoints
}

/// The plugin-level calls (`init`, `deinit`). Function pointers into a never-unloaded image.
struct PluginEntryPoints: @unchecked Sendable {
    let initialize: (@convention(c) (UnsafePointer<castline_host_services>?, OpaquePointer?, UnsafePointer<CChar>?,
                                     castline_error_buffer) -> Int32)?
    let deinitialize: (@convention(c) () -> Void)?
}

/// One feature of a loaded plugin.
package struct PluginFeature: Sendable {
    package let pluginID: String
    package let kind: PluginFeatureKind
    package let id: String
    package let rank: Int32
    /// What it declares: DNS-SD service types (discovery), namespaces (channel), content types (media format).
    package let declarations: [String]
    let vtable: PluginVTable
    let userdata: PluginUserData

    /// `pluginID/featureID`, the name used in logs.
    package var qualifiedName: String { "\(pluginID)/\(id)" }
}

/// A vtable copied into the host's struct size (fields the plugin did not have are zero).
enum PluginVTable: @unchecked Sendable {
    case discovery(castline_discovery_vtable)
    case channel(castline_channel_vtable)
    case mediaFormat(castline_media_format_vtable)
    case logSink(castline_log_sink_vtable)
    case bridge(castline_bridge_vtable)
    /// Known from a description only (the scanner's report): listed, never called.
    case described
    /// A channel of a plugin that runs in a helper process (``IsolatedPlugin``).
    case isolated(IsolatedPlugin)
}

/// The opaque `feature_userdata` pointer, handed back to the plugin untouched.
struct PluginUserData: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
}
