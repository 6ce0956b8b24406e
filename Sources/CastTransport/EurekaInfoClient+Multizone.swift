import CastCore
import CastLogging
import CastProtocol
import NIOCore

/// One entry of eureka_info's `multizone.groups`: a speaker group the answering device is a
/// member of, as pychromecast's `get_multizone_status` reads it. Value type.
package struct EurekaGroupEntry: Sendable, Equatable {
    /// The group's uuid as 32 lowercase hex digits (the group's mDNS `id`).
    package var id: String
    package var name: String
    /// The group's Cast port on the answering device when that device leads the group
    /// (`elected_leader: "self"` with `cast_port`); nil when another member leads it.
    package var castPort: Int?

    package init(id: String, name: String, castPort: Int? = nil) {
        self.id = id
        self.name = name
        self.castPort = castPort
    }

    /// An entry of `multizone.groups`; nil without a uuid of 32 hex digits.
    package init?(json: JSONValue) {
        let uuid = (json["uuid"]?.string ?? "").lowercased().filter { $0 != "-" }
        guard uuid.count == 32, uuid.allSatisfy(\.isHexDigit) else { return nil }
        id = uuid
        name = json["name"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? uuid
        if json["elected_leader"]?.string == "self", let port = json["cast_port"]?.int, (1...65535).contains(port) {
            castPort = Int(port)
        }
    }
}

extension EurekaInfoClient {
    /// Where speaker group `groupID` (32 hex digits) is led from, as member `host` tells it:
    /// its eureka_info `multizone.groups` entry with `elected_leader: "self"` and `cast_port`
    /// (what pychromecast's `get_multizone_status` reads). Nil when `host` does not lead the
    /// group, or does not answer within `timeout` seconds (HTTPS first, then HTTP).
    package static func groupLeader(groupID: String, host: String, httpsPort: Int = httpsPort, httpPort: Int = httpPort,
                                   timeout: Double = 0.5, group: EventLoopGroup) async -> (host: String, port: Int)? {
        let result = await fetch(path: "/setup/eureka_info?params=multizone", host: host, httpsPort: httpsPort, httpPort: httpPort,
                                 timeout: timeout, group: group)
        guard case .success(let answer) = result, answer.status == 200, answer.body.count <= maximumBodyBytes,
              let json = try? JSONValue.parse(String(decoding: answer.body, as: UTF8.self)) else { return nil }
        let wanted = groupID.lowercased().filter { $0 != "-" }
        for entry in (json["multizone"]?["groups"]?.array ?? []).compactMap(EurekaGroupEntry.init(json:)) {
            guard entry.id == wanted, let port = entry.castPort else { continue }
            return (host, port)
        }
        return nil
    }
}
