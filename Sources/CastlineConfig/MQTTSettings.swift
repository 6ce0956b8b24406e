import CastCore
#if canImport(Glibc)
import Glibc
#endif

/// The MQTT bridge (`mqtt:`, docs/fleet.md): where the agent's broker is and how it names itself
/// there. Absent: no bridge connects. Handed to the `mqtt-bridge` plugin as ``pluginJSON``.
package struct MQTTSettings: Sendable, Equatable {
    /// `mqtt` (plain TCP) or `mqtts` (TLS).
    package var scheme = "mqtt"
    package var host = ""
    package var port = 1883
    /// This agent's name, one topic level (default: the host name).
    package var agent = ""
    /// The first topic level(s) of every castline topic.
    package var baseTopic = "castline"
    package var username: String?
    /// A file holding the password (its first line); read by the plugin at each connect, never logged.
    package var passwordFile: String?
    /// PEM CA file for `mqtts` (default: the system's /etc/ssl/certs).
    package var caFile: String?
    /// Seconds between keepalives; the broker publishes the last will after 1.5 × this.
    package var keepalive = 30
    /// Home Assistant MQTT discovery (`<discovery_prefix>/…/config`).
    package var homeAssistant = true
    package var discoveryPrefix = "homeassistant"
    /// Seconds a device's link may be down before its availability topic says `offline` (its
    /// state says UNKNOWN at once): a reconnect of a moment does not make Home Assistant's
    /// entities flicker unavailable. 0: offline at once.
    package var deviceUnavailableAfter = 15.0
    package var mark = SourceMark(line: 0, column: 0)

    package init() {}

    /// The plugin's config object.
    package var pluginJSON: String {
        var o = JSONObject()
        o.set("scheme", .string(scheme))
        o.set("host", .string(host))
        o.set("port", .int(Int64(port)))
        o.set("agent", .string(agent))
        o.set("base_topic", .string(baseTopic))
        if let username { o.set("username", .string(username)) }
        if let passwordFile { o.set("password_file", .string(passwordFile)) }
        if let caFile { o.set("ca_file", .string(caFile)) }
        o.set("keepalive", .int(Int64(keepalive)))
        o.set("home_assistant", .bool(homeAssistant))
        o.set("discovery_prefix", .string(discoveryPrefix))
        o.set("device_unavailable_after", .double(deviceUnavailableAfter))
        return JSONValue.object(o).serialized()
    }

    /// `mqtt://host[:port]` or `mqtts://host[:port]` → (scheme, host, port); nil when it is neither.
    package static func parseURL(_ text: String) -> (scheme: String, host: String, port: Int)? {
        let schemes = [("mqtt://", "mqtt", 1883), ("mqtts://", "mqtts", 8883)]
        guard let (prefix, scheme, defaultPort) = schemes.first(where: { text.hasPrefix($0.0) }) else { return nil }
        var rest = Substring(text.dropFirst(prefix.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@") else { return nil }
        var host = rest, port = defaultPort
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()) else { return nil }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let p = Int(rest[rest.index(after: colon)...]) else { return nil }
            host = rest[..<colon]
            port = p
        }
        guard !host.isEmpty, (1...65_535).contains(port) else { return nil }
        return (scheme, String(host), port)
    }

    /// One MQTT topic level: no `/`, `+`, `#`, NUL; 1-64 bytes.
    package static func isTopicLevel(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && !text.utf8.contains { $0 == 0x2F || $0 == 0x2B || $0 == 0x23 || $0 == 0 }
    }

    /// The machine's host name, the default agent name ("castline" when it has none usable).
    package static func defaultAgent() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, 255) == 0 else { return "castline" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let short = String(name.prefix { $0 != "." })
        return isTopicLevel(short) ? short : "castline"
    }
}

extension CastlineConfiguration {
    mutating func decodeMQTT(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "mqtt", allowed: ["url", "agent", "base_topic", "username", "password_file", "ca_file",
                                                                     "keepalive", "home_assistant", "discovery_prefix",
                                                                     "device_unavailable_after"]) else { return }
        var settings = MQTTSettings()
        settings.mark = node.mark
        if let urlNode = map.require("url"), let url = reader.string(urlNode, path: "mqtt.url") {
            if let (scheme, host, port) = MQTTSettings.parseURL(url) {
                (settings.scheme, settings.host, settings.port) = (scheme, host, port)
            } else {
                reader.error(urlNode.mark, "mqtt.url must be mqtt://host[:port] or mqtts://host[:port] (credentials go in username / password_file), not \"\(url)\"")
            }
        }
        settings.agent = MQTTSettings.defaultAgent()
        if let agent = map.string("agent") {
            if MQTTSettings.isTopicLevel(agent) { settings.agent = agent } else {
                reader.error(map.value("agent")!.mark, "mqtt.agent must be one topic level (1-64 bytes, no '/', '+' or '#'), not \"\(agent)\"")
            }
        }
        for (key, keyPath) in [("base_topic", \MQTTSettings.baseTopic), ("discovery_prefix", \MQTTSettings.discoveryPrefix)] {
            guard let value = map.string(key) else { continue }
            let levels = value.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if levels.allSatisfy(MQTTSettings.isTopicLevel) { settings[keyPath: keyPath] = value } else {
                reader.error(map.value(key)!.mark, "mqtt.\(key) must be topic levels separated by '/' (no '+', '#', empty level or leading '/'), not \"\(value)\"")
            }
        }
        settings.username = map.string("username")
        for (key, keyPath) in [("password_file", \MQTTSettings.passwordFile), ("ca_file", \MQTTSettings.caFile)] {
            guard let path = map.string(key) else { continue }
            // The password may also be a systemd credential, by its bare name (LoadCredential=).
            if path.hasPrefix("/") || (key == "password_file" && !path.contains("/") && !path.isEmpty) { settings[keyPath: keyPath] = path } else {
                reader.error(map.value(key)!.mark, "mqtt.\(key) must be an absolute path\(key == "password_file" ? " or a systemd credential's name" : ""), not \"\(path)\"")
            }
        }
        if settings.passwordFile != nil, settings.username == nil, let mark = map.keyMark("password_file") {
            reader.error(mark, "mqtt.password_file needs mqtt.username")
        }
        if settings.caFile != nil, settings.scheme != "mqtts", let mark = map.keyMark("ca_file") {
            reader.error(mark, "mqtt.ca_file is for TLS: use an mqtts:// url")
        }
        if let keepalive = map.int("keepalive", 5...3_600) { settings.keepalive = keepalive }
        if let ha = map.bool("home_assistant") { settings.homeAssistant = ha }
        if let after = map.double("device_unavailable_after", 0...3_600, unit: "seconds") { settings.deviceUnavailableAfter = after }
        mqtt = settings
    }
}
