/// The MQTT bridge plugin (`Plugins/MQTTBridge`) as the executable knows it: its plugin id, the
/// key its config (the `mqtt:` section) is handed over under.
enum MQTTBridgeConfig {
    static let pluginID = "mqtt-bridge"
}
