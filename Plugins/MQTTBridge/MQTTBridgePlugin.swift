import CastPluginKit

/// `bridge:mqtt` (plugin ABI 1.1): the daemon's devices, jobs and events on an MQTT broker,
/// commands from it, Home Assistant discovery. Configured by castline's `mqtt:` section.
enum MQTTBridgePlugin: CastlinePlugin {
    static let id = "mqtt-bridge"
    static let version = "1.0.0"
    static let summary = "MQTT bridge (libmosquitto): fleet state, commands and Home Assistant discovery"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [.bridge(MQTTBridge.self, id: "mqtt")]
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(MQTTBridgePlugin.self) }
