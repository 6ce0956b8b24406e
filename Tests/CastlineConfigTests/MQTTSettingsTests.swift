import CastCore
import CastlineConfig
import Testing

/// The `mqtt:` section: what the bridge gets, and each mistake at its file:line:column.
@Suite struct MQTTSettingsTests {
    func errors(_ text: String) -> [String] {
        do {
            _ = try CastlineConfiguration.parse(text, file: "c.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func noSectionMeansNoBridge() throws {
        let (config, _) = try CastlineConfiguration.parse("devices: []\n", file: "c.yaml")
        #expect(config.mqtt == nil)
    }

    @Test func aFullSectionReachesThePluginAsJSON() throws {
        let (config, warnings) = try CastlineConfiguration.parse("""
            mqtt:
              url: mqtts://broker.example.com
              agent: lobby
              base_topic: fleet/castline
              username: lobby
              password_file: /etc/castline/mqtt.pw
              ca_file: /etc/castline/ca.pem
              keepalive: 10
              device_unavailable_after: 45
            """, file: "c.yaml")
        #expect(warnings.isEmpty)
        let mqtt = try #require(config.mqtt)
        #expect(mqtt.scheme == "mqtts" && mqtt.host == "broker.example.com" && mqtt.port == 8883)
        #expect(mqtt.agent == "lobby" && mqtt.baseTopic == "fleet/castline" && mqtt.keepalive == 10)
        let json = try JSONValue.parse(mqtt.pluginJSON)
        #expect(json["password_file"] == "/etc/castline/mqtt.pw" && json["username"] == "lobby" && json["port"] == 8883)
        #expect(json["home_assistant"] == true && json["discovery_prefix"] == "homeassistant")
        #expect(mqtt.deviceUnavailableAfter == 45 && json["device_unavailable_after"]?.double == 45)
    }

    @Test func defaultsAreThePortAndTheHostName() throws {
        let (config, _) = try CastlineConfiguration.parse("mqtt: {url: \"mqtt://10.0.0.5\"}\n", file: "c.yaml")
        let mqtt = try #require(config.mqtt)
        #expect(mqtt.port == 1883 && mqtt.baseTopic == "castline" && mqtt.keepalive == 30 && mqtt.deviceUnavailableAfter == 15)
        #expect(mqtt.agent == MQTTSettings.defaultAgent() && MQTTSettings.isTopicLevel(mqtt.agent))
        #expect(MQTTSettings.parseURL("mqtt://[::1]:1884")! == ("mqtt", "::1", 1884))
    }

    @Test func mistakesAreErrorsAtTheirValue() {
        #expect(errors("mqtt:\n  agent: a\n") == ["c.yaml:2:3: error: mqtt needs \"url\""])
        #expect(errors("mqtt:\n  url: http://broker\n") == [
            "c.yaml:2:8: error: mqtt.url must be mqtt://host[:port] or mqtts://host[:port] (credentials go in username / password_file), not \"http://broker\"",
        ])
        #expect(errors("mqtt:\n  url: mqtt://user:pw@broker\n").count == 1)
        #expect(errors("mqtt:\n  url: mqtt://b\n  agent: a/b\n") == [
            "c.yaml:3:10: error: mqtt.agent must be one topic level (1-64 bytes, no '/', '+' or '#'), not \"a/b\"",
        ])
        #expect(errors("mqtt:\n  url: mqtt://b\n  base_topic: /x/#\n").count == 1)
        #expect(errors("mqtt:\n  url: mqtt://b\n  password_file: pw\n  username: u\n") == [], "a systemd credential's name")
        #expect(errors("mqtt:\n  url: mqtt://b\n  password_file: etc/pw\n  username: u\n") == [
            "c.yaml:3:18: error: mqtt.password_file must be an absolute path or a systemd credential's name, not \"etc/pw\"",
        ])
        #expect(errors("mqtt:\n  url: mqtt://b\n  password_file: /pw\n") == ["c.yaml:3:3: error: mqtt.password_file needs mqtt.username"])
        #expect(errors("mqtt:\n  url: mqtt://b\n  ca_file: /ca.pem\n") == ["c.yaml:3:3: error: mqtt.ca_file is for TLS: use an mqtts:// url"])
        #expect(errors("mqtt:\n  url: mqtt://b\n  keepalive: 1\n").first?.contains("mqtt.keepalive") == true)
        #expect(errors("mqtt:\n  url: mqtt://b\n  device_unavailable_after: -1\n").first?.contains("mqtt.device_unavailable_after") == true)
        #expect(errors("mqtt:\n  url: mqtt://b\n  keeplive: 10\n").first?.contains("did you mean \"keepalive\"") == true)
    }
}
