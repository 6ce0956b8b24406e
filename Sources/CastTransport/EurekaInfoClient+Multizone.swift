import CastCore
import CastLogging
import CastProtocol
import NIOCore

extension EurekaInfoClient {
    /// Where speaker group `groupID` (32 hex digits) is led from, as member `host` tells it:
    /// its eureka_info `multizone.groups` entry with `elected_leader: "self"` and `cast_port`
    /// (what pychromecast's `get_multizone_status` reads). Nil when `host` does not lead the
    /// group, or does not answer within `timeout` seconds (HTTPS first, then HTTP).
    public static func groupLeader(groupID: String, host: String, httpsPort: Int = httpsPort, httpPort: Int = httpPort,
                                   timeout: Double = 0.5, group: EventLoopGroup) async -> (host: String, port: Int)? {
        let result = await fetch(path: "/setup/eureka_info?params=multizone", host: host, httpsPort: httpsPort, httpPort: httpPort,
                                 timeout: timeout, group: group)
        guard case .success(let answer) = result, answer.status == 200, answer.body.count <= maximumBodyBytes,
              let json = try? JSONValue.parse(String(decoding: answer.body, as: UTF8.self)) else { return nil }
        let wanted = groupID.lowercased().filter { $0 != "-" }
        for entry in json["multizone"]?["groups"]?.array ?? [] {
            guard entry["uuid"]?.string?.lowercased().filter({ $0 != "-" }) == wanted,
                  entry["elected_leader"]?.string == "self", let port = entry["cast_port"]?.int, (1...65535).contains(port) else { continue }
            return (host, Int(port))
        }
        return nil
    }
}
