import CastJSON
import CastPluginKit

/// The plugin's config object: castline's `mqtt:` section as `CastlineConfig` checked it
/// (`MQTTSettings.pluginJSON`). No `host` (no `mqtt:` section): the bridge stays idle.
struct BridgeSettings {
    var host: String
    var port: Int
    var tls: Bool
    var agent: String
    var baseTopic: String
    var username: String?
    var passwordFile: String?
    var caFile: String?
    var keepalive: Int
    var homeAssistant: Bool
    var discoveryPrefix: String
    /// Seconds a device's link may be down before its availability says offline (`mqtt.device_unavailable_after`).
    var deviceUnavailableAfter = 15.0
    /// TCP_NODELAY on the broker connection; `CASTLINE_MQTT_TCP_NODELAY=0` in castline's
    /// environment turns it off (for `make bench-mqtt`'s comparison only; not a config key).
    var tcpNoDelay = true

    /// Nil when the config names no broker. `noDelayVariable` is the value of
    /// `CASTLINE_MQTT_TCP_NODELAY`, if set.
    static func parse(_ text: String, noDelayVariable: String? = nil) throws(PluginError) -> BridgeSettings? {
        let value = try JSONValue.parsePluginInput(text)
        guard let host = value["host"]?.string, !host.isEmpty else { return nil }
        guard let agent = value["agent"]?.string, !agent.isEmpty else { throw PluginError("mqtt: no agent name") }
        return BridgeSettings(
            host: host, port: Int(value["port"]?.int ?? 1883), tls: value["scheme"]?.string == "mqtts", agent: agent,
            baseTopic: value["base_topic"]?.string ?? "castline", username: value["username"]?.string,
            passwordFile: value["password_file"]?.string, caFile: value["ca_file"]?.string,
            keepalive: Int(value["keepalive"]?.int ?? 30), homeAssistant: value["home_assistant"]?.bool ?? true,
            discoveryPrefix: value["discovery_prefix"]?.string ?? "homeassistant",
            deviceUnavailableAfter: max(0, value["device_unavailable_after"]?.double ?? 15), tcpNoDelay: noDelayVariable != "0")
    }
}
