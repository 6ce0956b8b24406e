import CastCore
import CastLogging
import CastReceiverSim
import Glibc

/// The simulator's JSON configuration file. Every error reads `file:line:column: message`.
///
/// ```json
/// {
///   "devices": [{"name": "Kitchen TV", "uuid": "…32 hex…", "model": "Chromecast", "address": "127.0.0.2",
///                "castPort": 8009, "httpPort": 8008, "httpsPort": 8443, "video": true, "tls": "chromecast-legacy",
///                "profile": "nest-hub", "field": {"appIdleTimeout": 30, "idleResetBy": "media"},
///                "latency": {"base_ms": 50, "jitter_ms": 20}, "first_frame": {"base_ms": 0, "jitter_ms": 150},
///                "clock_drift_ppm": 200, "playback_rates": {"min": 0.5, "max": 2}}],
///   "apps": [{"appId": "ABCD1234", "displayName": "Chat", "namespaces": ["urn:x-cast:com.example.chat"],
///             "supportedMediaCommands": 12303, "iconUrl": "",
///             "customNamespaces": [{"namespace": "urn:x-cast:com.example.chat", "mode": "scripted",
///                                   "replies": {"HELLO": {"type": "WELCOME"}}}]}],
///   "mediaRules": [{"contentId": "*2160p*", "contentType": "video/*",
///                   "videoInfo": {"width": 3840, "height": 2160, "hdrType": "hdr"}, "duration": 120, "loadError": 104}],
///   "groups": [{"name": "Downstairs", "uuid": "…32 hex…", "members": [0, 1, 2], "leader": 0, "stereoPair": [1, 2],
///               "castPort": 32219}]
/// }
/// ```
/// A device's `profile` names a field profile (``FieldProfile/builtIn``, or `model`: its model's,
/// or `ideal`); `field` overrides the profile's values (``ConfigReader/fieldProfile``): with
/// `field` and no `profile`, the model's profile is the base.
/// `latency`, `first_frame`, `clock_drift_ppm` and `playback_rates` are the device's
/// synchronisation behaviour (``ConfigReader/applySync(_:_:to:)``).
/// A group's `uuid` defaults to one derived from its name, `leader` to its first member,
/// `castPort` to 32219 + 30 × its position (``SimulatedGroupConfiguration``).
/// Every key is optional; unknown keys are errors (typos are caught, not ignored).
public struct SimulatorConfigFile: Sendable {
    public var devices: [SimulatedDeviceConfiguration] = []
    public var apps: [AppDefinition] = []
    public var mediaRules: [MediaRule] = []
    /// Speaker groups of the devices (indexes into the device list the simulator runs).
    public var groups: [SimulatedGroupConfiguration] = []

    public init() {}

    /// Reads and validates `path`.
    public static func load(path: String) throws(SimulatorError) -> SimulatorConfigFile {
        try parse(text: try readText(path), file: path)
    }

    /// Parses `text`; `file` names it in errors.
    public static func parse(text: String, file: String) throws(SimulatorError) -> SimulatorConfigFile {
        let locator = JSONSourceLocator(text: text)
        let root: JSONValue
        do {
            root = try JSONValue.parse(text)
        } catch {
            let (line, column) = locator.location(ofOffset: error.offset)
            throw .configuration("\(file):\(line):\(column): invalid JSON: \(error.reason)")
        }
        var reader = ConfigReader(file: file, locator: locator)
        return try reader.file(root)
    }

    static func readText(_ path: String) throws(SimulatorError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .configuration("\(path): cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { throw .configuration("\(path): cannot read: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            bytes += chunk[..<n]
            if bytes.count > 16 << 20 { throw .configuration("\(path): larger than 16 MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .configuration("\(path): not UTF-8 text") }
        return text
    }
}

/// Walks the parsed document with paths so errors can be located.
struct ConfigReader {
    let file: String
    let locator: JSONSourceLocator

    func fail(_ path: String, _ message: String) -> SimulatorError {
        let (line, column) = locator.location(of: path)
        return .configuration("\(file):\(line):\(column): \(path.isEmpty ? "" : "\(path): ")\(message)")
    }

    func object(_ value: JSONValue, _ path: String, allowed: Set<String>) throws(SimulatorError) -> JSONObject {
        guard case .object(let object) = value else { throw fail(path, "expected an object, found \(value.kindDescription)") }
        for key in object.keys where !allowed.contains(key) {
            let (line, column) = locator.location(of: (path.isEmpty ? key : "\(path).\(key)") + "#key")
            throw .configuration("\(file):\(line):\(column): unknown key \"\(key)\"\(path.isEmpty ? "" : " in \(path)")"
                                 + " (expected one of: \(allowed.sorted().joined(separator: ", ")))")
        }
        return object
    }

    func array(_ value: JSONValue, _ path: String) throws(SimulatorError) -> [JSONValue] {
        guard case .array(let items) = value else { throw fail(path, "expected an array, found \(value.kindDescription)") }
        return items
    }

    func string(_ value: JSONValue, _ path: String) throws(SimulatorError) -> String {
        guard case .string(let text) = value else { throw fail(path, "expected a string, found \(value.kindDescription)") }
        return text
    }

    func int(_ value: JSONValue, _ path: String, range: ClosedRange<Int64>) throws(SimulatorError) -> Int {
        guard let number = value.int, range.contains(number) else {
            throw fail(path, "expected an integer in \(range.lowerBound)…\(range.upperBound), found \(value)")
        }
        return Int(number)
    }

    func double(_ value: JSONValue, _ path: String) throws(SimulatorError) -> Double {
        guard let number = value.double, number >= 0, number.isFinite else {
            throw fail(path, "expected a number ≥ 0, found \(value)")
        }
        return number
    }

    func bool(_ value: JSONValue, _ path: String) throws(SimulatorError) -> Bool {
        guard case .bool(let flag) = value else { throw fail(path, "expected true or false, found \(value.kindDescription)") }
        return flag
    }

    mutating func file(_ root: JSONValue) throws(SimulatorError) -> SimulatorConfigFile {
        let top = try object(root, "", allowed: ["devices", "apps", "mediaRules", "groups"])
        var result = SimulatorConfigFile()
        if let devices = top["devices"] {
            for (i, item) in try array(devices, "devices").enumerated() { result.devices.append(try device(item, "devices[\(i)]")) }
        }
        if let apps = top["apps"] {
            for (i, item) in try array(apps, "apps").enumerated() { result.apps.append(try app(item, "apps[\(i)]")) }
        }
        if let rules = top["mediaRules"] {
            for (i, item) in try array(rules, "mediaRules").enumerated() {
                result.mediaRules.append(try mediaRule(item, "mediaRules[\(i)]"))
            }
        }
        if let groups = top["groups"] {
            for (i, item) in try array(groups, "groups").enumerated() { result.groups.append(try group(item, "groups[\(i)]", index: i)) }
        }
        do { try SimulatorConfigurationCheck.validate(result.devices) } catch { throw fail("devices", "\(error)") }
        if !result.devices.isEmpty {
            do { try SimulatedGroupConfiguration.validate(result.groups, devices: result.devices) } catch { throw fail("groups", "\(error)") }
        }
        return result
    }

    func group(_ value: JSONValue, _ path: String, index: Int) throws(SimulatorError) -> SimulatedGroupConfiguration {
        let o = try object(value, path, allowed: ["name", "uuid", "members", "leader", "stereoPair", "castPort"])
        guard let nameValue = o["name"] else { throw fail(path, "missing \"name\"") }
        let name = try string(nameValue, "\(path).name")
        guard let membersValue = o["members"] else { throw fail(path, "missing \"members\" (device indexes)") }
        var members: [Int] = []
        for (i, item) in try array(membersValue, "\(path).members").enumerated() {
            members.append(try int(item, "\(path).members[\(i)]", range: 0...99_999))
        }
        guard !members.isEmpty else { throw fail("\(path).members", "needs at least one device index") }
        var uuid = SimulatedGroupConfiguration.derivedUUID(name: name, index: index)
        if let v = o["uuid"] {
            uuid = try string(v, "\(path).uuid").lowercased().filter { $0 != "-" }
            guard uuid.utf8.count == 32, uuid.allSatisfy({ $0.isHexDigit }) else {
                throw fail("\(path).uuid", "must be 32 hex digits (dashes allowed)")
            }
        }
        let leader = try o["leader"].map { v throws(SimulatorError) in try int(v, "\(path).leader", range: 0...99_999) }
        if let leader, !members.contains(leader) { throw fail("\(path).leader", "\(leader) is not one of the members") }
        var pair: [Int]?
        if let v = o["stereoPair"] {
            let items = try array(v, "\(path).stereoPair")
            var sides: [Int] = []
            for (i, item) in items.enumerated() { sides.append(try int(item, "\(path).stereoPair[\(i)]", range: 0...99_999)) }
            guard sides.count == 2, sides[0] != sides[1], sides.allSatisfy(members.contains) else {
                throw fail("\(path).stereoPair", "must be two different members [left, right]")
            }
            pair = sides
        }
        let port = try o["castPort"].map { v throws(SimulatorError) in try int(v, "\(path).castPort", range: 1...65_000) }
            ?? SimulatedGroupConfiguration.defaultBasePort + SimulatedGroupConfiguration.portsPerGroup * index
        return SimulatedGroupConfiguration(name: name, uuid: uuid, members: members, leader: leader, stereoPair: pair, castPort: port)
    }

    func device(_ value: JSONValue, _ path: String) throws(SimulatorError) -> SimulatedDeviceConfiguration {
        let o = try object(value, path, allowed: Self.syncKeys.union(["name", "uuid", "model", "address", "castPort", "httpPort",
                                                                      "httpsPort", "video", "tls", "profile", "field"]))
        guard let nameValue = o["name"] else { throw fail(path, "missing \"name\"") }
        guard let uuidValue = o["uuid"] else { throw fail(path, "missing \"uuid\" (32 hex digits)") }
        let uuid = try string(uuidValue, "\(path).uuid").lowercased().filter { $0 != "-" }
        guard uuid.utf8.count == 32, uuid.allSatisfy({ $0.isHexDigit }) else {
            throw fail("\(path).uuid", "must be 32 hex digits (dashes allowed)")
        }
        var device = SimulatedDeviceConfiguration(name: try string(nameValue, "\(path).name"), uuid: uuid)
        if let v = o["model"] { device.model = try string(v, "\(path).model") }
        if let v = o["address"] {
            device.address = try string(v, "\(path).address")
            guard let ip = IPv4(device.address), ip.value >> 24 == 127 else {
                throw fail("\(path).address", "must be a loopback IPv4 address (127.x.y.z)")
            }
        }
        if let v = o["castPort"] { device.castPort = try int(v, "\(path).castPort", range: 1...65535) }
        if let v = o["httpPort"] { device.httpPort = try int(v, "\(path).httpPort", range: 1...65535) }
        if let v = o["httpsPort"] { device.httpsPort = try int(v, "\(path).httpsPort", range: 1...65535) }
        if let v = o["video"] { device.isVideoDevice = try bool(v, "\(path).video") }
        if let v = o["tls"] {
            let name = try string(v, "\(path).tls")
            guard let profile = DeviceTLSProfile(rawValue: name) else {
                throw fail("\(path).tls", "unknown TLS profile \"\(name)\" (expected \(DeviceTLSProfile.names))")
            }
            device.tlsProfile = profile
        }
        device.field = try fieldProfile(profile: o["profile"], overrides: o["field"], path: path, model: device.model,
                                        isVideoDevice: device.isVideoDevice)
        try applySync(o, path, to: &device)
        return device
    }

    func app(_ value: JSONValue, _ path: String) throws(SimulatorError) -> AppDefinition {
        let o = try object(value, path, allowed: ["appId", "displayName", "namespaces", "supportedMediaCommands", "iconUrl",
                                                  "customNamespaces"])
        guard let idValue = o["appId"] else { throw fail(path, "missing \"appId\"") }
        let appID = try string(idValue, "\(path).appId")
        guard !appID.isEmpty else { throw fail("\(path).appId", "must not be empty") }
        var namespaces: [CastNamespace] = []
        if let list = o["namespaces"] {
            for (i, item) in try array(list, "\(path).namespaces").enumerated() {
                let name = try string(item, "\(path).namespaces[\(i)]")
                guard CastNamespace(name).hasCastPrefix else {
                    throw fail("\(path).namespaces[\(i)]", "namespace must start with urn:x-cast:")
                }
                namespaces.append(CastNamespace(name))
            }
        }
        var custom: [CustomNamespaceBehaviour] = []
        if let list = o["customNamespaces"] {
            for (i, item) in try array(list, "\(path).customNamespaces").enumerated() {
                let behaviour = try customNamespace(item, "\(path).customNamespaces[\(i)]")
                if !namespaces.contains(behaviour.namespace) { namespaces.append(behaviour.namespace) }
                custom.append(behaviour)
            }
        }
        // A declared namespace that is not the media one and has no behaviour echoes.
        for namespace in namespaces where namespace != .media && !custom.contains(where: { $0.namespace == namespace }) {
            custom.append(CustomNamespaceBehaviour(namespace: namespace, mode: .echo))
        }
        var commands = SupportedMediaCommands(rawValue: 12_303)
        if let v = o["supportedMediaCommands"] {
            commands = SupportedMediaCommands(rawValue: UInt64(try int(v, "\(path).supportedMediaCommands", range: 0...Int64(Int32.max))))
        }
        let displayName = try o["displayName"].map { v throws(SimulatorError) in try string(v, "\(path).displayName") } ?? appID
        let iconURL = try o["iconUrl"].map { v throws(SimulatorError) in try string(v, "\(path).iconUrl") } ?? ""
        return AppDefinition(appID: appID, displayName: displayName, namespaces: namespaces,
                             supportedMediaCommands: commands, customNamespaces: custom, iconURL: iconURL)
    }

    func customNamespace(_ value: JSONValue, _ path: String) throws(SimulatorError) -> CustomNamespaceBehaviour {
        let o = try object(value, path, allowed: ["namespace", "mode", "replies"])
        guard let nameValue = o["namespace"] else { throw fail(path, "missing \"namespace\"") }
        let name = try string(nameValue, "\(path).namespace")
        guard CastNamespace(name).hasCastPrefix else { throw fail("\(path).namespace", "namespace must start with urn:x-cast:") }
        let modeName = try o["mode"].map { v throws(SimulatorError) in try string(v, "\(path).mode") }
            ?? (o["replies"] == nil ? "echo" : "scripted")
        let mode: CustomNamespaceBehaviour.Mode
        switch modeName {
        case "echo": mode = .echo
        case "silent": mode = .silent
        case "scripted":
            guard let repliesValue = o["replies"] else { throw fail(path, "mode \"scripted\" needs \"replies\": {\"TYPE\": {…}}") }
            guard case .object(let replies) = repliesValue else { throw fail("\(path).replies", "expected an object") }
            var table: [String: JSONValue] = [:]
            for (type, reply) in replies {
                guard case .object = reply else { throw fail("\(path).replies.\(type)", "expected a JSON object reply") }
                table[type] = reply
            }
            mode = .scripted(table)
        case "dashcast": mode = .dashCast
        case "home-assistant": mode = .homeAssistant
        default:
            throw fail("\(path).mode", "unknown mode \"\(modeName)\" (expected echo, silent, scripted, dashcast or home-assistant)")
        }
        return CustomNamespaceBehaviour(namespace: CastNamespace(name), mode: mode)
    }

    func mediaRule(_ value: JSONValue, _ path: String) throws(SimulatorError) -> MediaRule {
        let o = try object(value, path, allowed: ["contentId", "contentType", "videoInfo", "duration", "loadError"])
        var rule = MediaRule()
        if let v = o["contentId"] { rule.contentIdGlob = try glob(v, "\(path).contentId") }
        if let v = o["contentType"] { rule.contentTypeGlob = try glob(v, "\(path).contentType") }
        if let v = o["videoInfo"] {
            let info = try object(v, "\(path).videoInfo", allowed: ["width", "height", "hdrType"])
            guard let width = info["width"], let height = info["height"] else {
                throw fail("\(path).videoInfo", "needs \"width\" and \"height\"")
            }
            let hdr = try info["hdrType"].map { v throws(SimulatorError) in try string(v, "\(path).videoInfo.hdrType") } ?? "sdr"
            guard HDRType.knownValues.contains(HDRType(rawValue: hdr)) else {
                throw fail("\(path).videoInfo.hdrType", "unknown HDR type \"\(hdr)\" (expected "
                           + HDRType.knownValues.map(\.rawValue).joined(separator: ", ") + ")")
            }
            rule.videoInfo = VideoInfo(width: try int(width, "\(path).videoInfo.width", range: 1...16384),
                                       height: try int(height, "\(path).videoInfo.height", range: 1...16384),
                                       hdrType: HDRType(rawValue: hdr))
        }
        if let v = o["duration"] { rule.duration = try double(v, "\(path).duration") }
        if let v = o["loadError"] {
            rule.loadError = DetailedErrorCode(rawValue: try int(v, "\(path).loadError", range: 100...999))
        }
        return rule
    }

    func glob(_ value: JSONValue, _ path: String) throws(SimulatorError) -> String {
        let text = try string(value, path)
        guard !text.isEmpty else { throw fail(path, "empty pattern") }
        do { _ = try GlobPattern(text) } catch { throw fail(path, "bad glob \"\(text)\": \(error)") }
        return text
    }
}
