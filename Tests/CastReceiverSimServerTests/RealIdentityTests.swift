import CastCore
@testable import CastReceiverSimServer
import CastTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real devices' identity (`Tests/Fixtures/real/`: eureka_info answers and `_googlecast._tcp` TXT
/// records transcribed from public threads): the simulator's own eureka_info and TXT for the same
/// kind of device carry the same keys, and a replay of a complete recorded record advertises it
/// as recorded. Every difference is listed with its reason; anything else fails.
@Suite("Real device identity")
struct RealIdentityTests {
    static func load(_ name: String) throws -> JSONValue {
        let json = try RealFixtures.json(name)
        guard json["source"]?.string?.hasPrefix("https://github.com/") == true, json["device"]?["model"]?.string != nil else {
            throw RealFixtures.Unreadable(path: RealFixtures.folder + "/" + name, reason: "no GitHub source or no device.model")
        }
        return json
    }

    static let txtNames = ["txt-chromecast-2014.json", "txt-google-home-mini-2020.json", "txt-shield-android-tv-2021.json",
                           "txt-nest-mini-2023.json"]
    static let eurekaNames = ["eureka-info-chromecast-2022.json", "eureka-info-google-home-2018.json"]

    /// A simulated device of the fixture's model and kind (video or audio).
    static func device(like fixture: JSONValue) -> SimulatedDeviceConfiguration {
        var device = SimulatedDeviceConfiguration(name: "Sim", uuid: "0123456789abcdef0123456789abcdef",
                                                  model: fixture["device"]?["model"]?.string ?? "Chromecast")
        device.isVideoDevice = fixture["device"]?["video"]?.bool ?? true
        return device
    }

    /// "key=value" strings as (key, value) pairs, in their order.
    static func pairs(_ strings: [String]) -> [(key: String, value: String)] {
        strings.map { entry in
            let key = String(entry.prefix { $0 != "=" })
            return (key, String(entry.dropFirst(key.count + 1)))
        }
    }

    static func txt(_ fixture: JSONValue) -> [String] { fixture["txt"]?.array?.compactMap(\.string) ?? [] }

    /// The fixture's strings in the record's own order (avahi-browse lists them last first).
    static func recordOrder(_ fixture: JSONValue) -> [String] {
        fixture["order"]?.string == "avahi-browse" ? txt(fixture).reversed() : txt(fixture)
    }

    static func isHex(_ text: String, count: Int, uppercase: Bool) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (uppercase ? (byte >= 0x41 && byte <= 0x46) : (byte >= 0x61 && byte <= 0x66))
        }
    }

    /// What each key's value looks like on devices announcing `ve=05`; nil when `value` fits.
    static func shapeProblem(key: String, value: String, video: Bool) -> String? {
        switch key {
        case "id": return isHex(value, count: 32, uppercase: false) ? nil : "id is not 32 lowercase hex digits"
        case "cd": return isHex(value, count: 32, uppercase: true) ? nil : "cd is not 32 uppercase hex digits"
        case "bs": return isHex(value, count: 12, uppercase: true) && value.hasPrefix("FA8F") ? nil : "bs is not FA8F + 8 uppercase hex digits"
        case "rm": return value.isEmpty || isHex(value, count: 16, uppercase: true) ? nil : "rm is neither empty nor 16 uppercase hex digits"
        case "ve": return value.utf8.count == 2 && UInt8(value) != nil ? nil : "ve is not two digits"
        case "nf": return UInt8(value) != nil ? nil : "nf is not a small number"
        case "st": return value == "0" || value == "1" ? nil : "st is not 0 or 1"
        case "ic": return value == "/setup/icon.png" ? nil : "ic is not /setup/icon.png"
        case "ca":
            guard let bits = Int(value) else { return "ca is not a decimal number" }
            return (bits & 1 == 1) == video ? nil : "ca bit 0 (video out) does not match the kind of device"
        default: return nil
        }
    }

    @Test("every golden TXT record is well formed: one value per key, the shapes devices use", arguments: txtNames)
    func goldenTXTShapes(name: String) throws {
        let fixture = try Self.load(name)
        let entries = Self.pairs(Self.txt(fixture))
        #expect(Set(entries.map(\.key)).count == entries.count, "a key appears twice")
        let video = fixture["device"]?["video"]?.bool ?? true
        let record = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
        #expect(record["md"] == fixture["device"]?["model"]?.string)
        for (key, value) in entries where record["ve"] == "05" || ["id", "ve", "st", "ic", "ca"].contains(key) {
            #expect(Self.shapeProblem(key: key, value: value, video: video) == nil, "\(name): \(key)=\(value)")
        }
    }

    @Test("the simulator's TXT has the keys, order and value shapes of the real record for the same kind of device",
          arguments: txtNames)
    func simulatorTXTMatchesTheRealOne(name: String) throws {
        let fixture = try Self.load(name)
        let device = Self.device(like: fixture)
        let ours = Self.pairs(MDNSAdvertisement(configuration: device, busy: false, statusText: "", appIDs: []).txt)
        let real = Self.pairs(Self.recordOrder(fixture))
        let ourKeys = ours.map(\.key)
        let realKeys = real.map(\.key)
        for (key, value) in ours {
            #expect(Self.shapeProblem(key: key, value: value, video: device.isVideoDevice) == nil, "the simulator's \(key)=\(value)")
        }
        // Known difference, with its reason; anything else fails.
        // - The 2014 Chromecast (ve=02) announced seven keys; cd, rm, bs, nf and rs came with
        //   later firmware (ve=05, every record from 2020 on), which the simulator follows.
        let ourExtra = fixture["txt"]?.array?.contains("ve=02") == true ? ["bs", "cd", "nf", "rm", "rs"] : []
        #expect(Set(realKeys).subtracting(ourKeys).sorted() == [], "\(name): the real device announces keys the simulator does not")
        #expect(Set(ourKeys).subtracting(realKeys).sorted() == ourExtra, "\(name): the simulator announces keys the real device does not")
        if fixture["order"]?.string != "unordered" {
            #expect(ourKeys.filter(realKeys.contains) == realKeys, "\(name): the keys come in another order")
        }
    }

    @Test("a replay of a complete recorded record advertises it as recorded: the same strings, nothing added",
          arguments: txtNames)
    func replayedRecordIsTheRecordedOne(name: String) throws {
        let fixture = try Self.load(name)
        let recorded = Self.pairs(Self.recordOrder(fixture))
        var advertisement = MDNSAdvertisement(configuration: Self.device(like: fixture), busy: false, statusText: "", appIDs: [])
        advertisement.recordedTXT = Dictionary(uniqueKeysWithValues: recorded.map { ($0.key, $0.value) })
        advertisement.recordedTXTOrder = recorded.map(\.key)
        advertisement.keepsRecordedStatus = true
        #expect(advertisement.txt == Self.recordOrder(fixture))
        // Once the replayed device runs an app of its own, st and rs are its own.
        advertisement.keepsRecordedStatus = false
        advertisement.busy = true
        advertisement.statusText = "Default Media Receiver"
        let live = advertisement.txt
        if recorded.contains(where: { $0.key == "st" }) { #expect(live.contains("st=1")) }
        if recorded.contains(where: { $0.key == "rs" }) { #expect(live.contains("rs=Default Media Receiver")) }
        #expect(live.count == recorded.count)
    }

    /// Every key path of `value` with the kind of value there (`a.b` for members, `a[]` for
    /// array elements); numbers are one kind (devices write 255 and 255.0 alike).
    static func shape(_ value: JSONValue, prefix: String = "") -> [String: String] {
        var paths: [String: String] = [:]
        switch value {
        case .object(let object):
            for (key, member) in object {
                let path = prefix.isEmpty ? key : "\(prefix).\(key)"
                paths[path] = kind(member)
                paths.merge(shape(member, prefix: path)) { first, _ in first }
            }
        case .array(let items):
            for item in items { paths.merge(shape(item, prefix: prefix + "[]")) { first, _ in first } }
        default:
            break
        }
        return paths
    }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .bool: return "bool"
        case .null: return "null"
        default: return "number"
        }
    }

    @Test("the simulator's eureka_info has the real answer's key paths and value kinds for the same kind of device",
          arguments: eurekaNames)
    func simulatorEurekaMatchesTheRealOne(name: String) throws {
        let fixture = try Self.load(name)
        let real = try #require(fixture["document"])
        let device = Self.device(like: fixture)
        let ours = EurekaInfo(name: "Sim", uuid: device.uuid, model: device.model, ipAddress: "127.0.0.1",
                              displaySupported: device.isVideoDevice, uptime: 12.5).json
        let realShape = Self.shape(real)
        let ourShape = Self.shape(ours)
        // Known differences, each with its reason; anything else fails.
        // - uma_client_id: the 2018 firmware (1.34) sent it; the 2022 one (1.56), which the
        //   simulator follows, does not.
        let realOnly: Set<String> = name.contains("2018") ? ["uma_client_id"] : []
        // - device_info, multizone: a real device sends them only when `params` names them
        //   (GHLocalApi#29; pychromecast and castline always name them, over HTTPS 8443); the
        //   simulator's document without params has them too.
        let ourOnly = Set(ourShape.keys.filter { $0.hasPrefix("device_info") || $0.hasPrefix("multizone") })
        #expect(Set(realShape.keys).subtracting(ourShape.keys) == realOnly, "\(name): the real device sent keys the simulator does not")
        #expect(Set(ourShape.keys).subtracting(realShape.keys) == ourOnly, "\(name): the simulator sends keys the real device did not")
        for (path, kind) in realShape where ourShape[path] != nil {
            #expect(ourShape[path] == kind, "\(name): \(path) is \(kind) on the device, \(ourShape[path] ?? "-") in the simulator")
        }
        // Keys in alphabetical order, as the devices send them.
        let keys = ours.object?.keys ?? []
        #expect(keys == keys.sorted())
        let realKeys = real.object?.keys ?? []
        #expect(realKeys == realKeys.sorted())
    }

    @Test("the simulator's hotspot_bssid ends as its TXT bs value does, as on devices")
    func hotspotMatchesBS() throws {
        let device = SimulatedDeviceConfiguration(name: "Sim", uuid: "0123456789abcdef0123456789abcdef", model: "Chromecast")
        let eureka = EurekaInfo(name: "Sim", uuid: device.uuid, model: device.model, ipAddress: "127.0.0.1", displaySupported: true,
                                uptime: 1).json
        let bs = try #require(MDNSAdvertisement(configuration: device, busy: false, statusText: "", appIDs: []).txt
            .first { $0.hasPrefix("bs=") })
        let hotspot = try #require(eureka["hotspot_bssid"]?.string)
        #expect("bs=" + hotspot.filter { $0 != ":" } == bs)
    }
}
