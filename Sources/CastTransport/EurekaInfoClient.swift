import CastCore
import CastHTTP
import CastLogging
import CastProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SystemCrypto

#if canImport(Glibc)
import Glibc
#endif

/// What a Cast device says about itself at `/setup/eureka_info`. Value type.
public struct EurekaDeviceInfo: Sendable, Equatable {
    /// The friendly name (`name`, else `device_info.name`).
    package var name: String?
    /// The device id as mDNS announces it (32 lowercase hex digits): `ssdp_udn` without its
    /// dashes, else the common name of the certificate the HTTPS port presented.
    package var id: String?
    /// `device_info.model_name`.
    package var model: String?
    /// `device_info.capabilities.display_supported`: whether the device has a screen (pychromecast
    /// calls a device without one an audio device); nil when the answer does not say.
    package var displaySupported: Bool?
    /// `multizone.groups`: the speaker groups the device is a member of.
    package var groups: [EurekaGroupEntry] = []

    package init(name: String? = nil, id: String? = nil, model: String? = nil, displaySupported: Bool? = nil,
                groups: [EurekaGroupEntry] = []) {
        self.name = name
        self.id = id
        self.model = model
        self.displaySupported = displaySupported
        self.groups = groups
    }

    /// The group this device leads with its endpoint at `port` (what a speaker group's address
    /// `host:port` is, seen from the device that owns `host`); nil when it leads none there.
    package func group(ledAt port: Int) -> EurekaGroupEntry? {
        groups.first { $0.castPort == port }
    }

    /// The fields of an eureka_info answer; nil when `body` is not a JSON object or names nothing.
    package static func parse(body: [UInt8], peerCommonName: String?) -> EurekaDeviceInfo? {
        guard let document = try? JSONValue.parse(bytes: body), case .object = document else { return nil }
        let deviceInfo = document["device_info"]
        var info = EurekaDeviceInfo()
        info.name = [document["name"]?.string, deviceInfo?["name"]?.string].compactMap { $0 }.first { !$0.isEmpty }
        info.model = deviceInfo?["model_name"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        info.displaySupported = deviceInfo?["capabilities"]?["display_supported"]?.bool
        info.groups = (document["multizone"]?["groups"]?.array ?? []).compactMap(EurekaGroupEntry.init(json:))
        let udn = (document["ssdp_udn"]?.string ?? deviceInfo?["ssdp_udn"]?.string ?? "").lowercased().filter { $0 != "-" }
        if udn.count == 32, udn.allSatisfy(\.isHexDigit) {
            info.id = udn
        } else if let peerCommonName, !peerCommonName.isEmpty {
            info.id = peerCommonName
        }
        return info.name == nil && info.id == nil ? nil : info
    }
}

/// Asks a Cast device for its eureka_info, as pychromecast does: `GET /setup/eureka_info` over
/// HTTPS on 8443 (certificate not verified: devices present their own), over plain HTTP on
/// 8008 only when 8443 refuses the connection. One request; the whole exchange is bounded by a
/// timeout and the body by 64 KiB. Opens its own short-lived connection on `group`.
public enum EurekaInfoClient {
    public static let httpsPort = 8443
    public static let httpPort = 8008
    /// The largest answer read (a full eureka_info is about 2 KiB).
    static let maximumBodyBytes = 65_536
    /// What castline reads: the name, the model and capabilities, the id, and the groups (a
    /// speaker group reached by address is identified by its leader's `multizone.groups`).
    static let path = "/setup/eureka_info?params=name,device_info,ssdp_udn,multizone"

    /// The device's eureka_info, or nil when it does not answer one within `timeout` seconds
    /// (each failure is a debug record of class `EurekaInfoClient`).
    package static func describe(host: String, httpsPort: Int = httpsPort, httpPort: Int = httpPort, timeout: Double = 1,
                                group: EventLoopGroup, logSystem: LogSystem = .shared) async -> EurekaDeviceInfo? {
        let log = Logger(class: "EurekaInfoClient", system: logSystem).with(["device": .string(host)])
        let started = MonotonicClock.seconds()
        let result = await fetch(path: path, host: host, httpsPort: httpsPort, httpPort: httpPort, timeout: timeout, group: group)
        let durationMs = LogValue.int(Int((MonotonicClock.seconds() - started) * 1000))
        switch result {
        case .success(let answer) where answer.status != 200 || answer.body.count > maximumBodyBytes:
            log.debug("no eureka_info from \(host): HTTP \(answer.status)\(answer.body.count > maximumBodyBytes ? ", an answer over \(maximumBodyBytes) bytes" : "")",
                      ["durationMs": durationMs])
            return nil
        case .success(let answer):
            guard let info = EurekaDeviceInfo.parse(body: answer.body, peerCommonName: answer.peerCertificateDER.flatMap { (try? Certificate(derBytes: $0))?.commonName }) else {
                log.debug("eureka_info of \(host) is not a device description", ["bytes": .int(answer.body.count)])
                return nil
            }
            log.debug("eureka_info of \(host): \(info.name ?? "no name"), id \(info.id ?? "none"), model \(info.model ?? "unknown")", [
                "deviceName": .string(info.name ?? ""), "model": .string(info.model ?? ""), "groups": .int(info.groups.count),
                "durationMs": durationMs,
            ])
            return info
        case .failure(let failure):
            log.debug("no eureka_info from \(host): \(failure)", ["durationMs": durationMs])
            return nil
        }
    }

    /// The whole eureka_info document (no `params`: every key the device gives), as JSON; nil
    /// when the device answers none within `timeout` seconds. What `castline capture` records.
    package static func document(host: String, httpsPort: Int = httpsPort, httpPort: Int = httpPort, timeout: Double = 2,
                                group: EventLoopGroup) async -> JSONValue? {
        guard case .success(let answer) = await fetch(path: "/setup/eureka_info", host: host, httpsPort: httpsPort, httpPort: httpPort,
                                                      timeout: timeout, group: group),
              answer.status == 200, answer.body.count <= maximumBodyBytes,
              let json = try? JSONValue.parse(bytes: answer.body), json.object != nil else { return nil }
        return json
    }

    /// One GET of `path`: HTTPS on `httpsPort`, plain HTTP on `httpPort` only when HTTPS is refused.
    static func fetch(path: String, host: String, httpsPort: Int, httpPort: Int, timeout: Double,
                      group: EventLoopGroup) async -> Result<HTTPExchange.Answer, HTTPExchange.Failure> {
        let started = MonotonicClock.seconds()
        func fetch(port: Int, secure: Bool, timeout: Double) async -> Result<HTTPExchange.Answer, HTTPExchange.Failure> {
            await HTTPExchange.request(.GET, path: path, host: host, port: port, secure: secure, verification: .none,
                                       headers: [("Accept", "application/json")], timeout: timeout, maximumBody: maximumBodyBytes + 1,
                                       group: group)
        }
        var result = await fetch(port: httpsPort, secure: true, timeout: timeout)
        if case .failure(.refused) = result {
            let left = timeout - (MonotonicClock.seconds() - started)
            if left > 0.01 { result = await fetch(port: httpPort, secure: false, timeout: left) }
        }
        return result
    }
}
