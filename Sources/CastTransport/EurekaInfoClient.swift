import CastCore
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
    public var name: String?
    /// The device id as mDNS announces it (32 lowercase hex digits): `ssdp_udn` without its
    /// dashes, else the common name of the certificate the HTTPS port presented.
    public var id: String?
    /// `device_info.model_name`.
    public var model: String?

    public init(name: String? = nil, id: String? = nil, model: String? = nil) {
        self.name = name
        self.id = id
        self.model = model
    }

    /// The fields of an eureka_info answer; nil when `body` is not a JSON object or names nothing.
    public static func parse(body: [UInt8], peerCommonName: String?) -> EurekaDeviceInfo? {
        guard let document = try? JSONValue.parse(bytes: body), case .object = document else { return nil }
        let deviceInfo = document["device_info"]
        var info = EurekaDeviceInfo()
        info.name = [document["name"]?.string, deviceInfo?["name"]?.string].compactMap { $0 }.first { !$0.isEmpty }
        info.model = deviceInfo?["model_name"]?.string.flatMap { $0.isEmpty ? nil : $0 }
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
    static let path = "/setup/eureka_info?params=name,device_info,ssdp_udn"

    /// The device's eureka_info, or nil when it does not answer one within `timeout` seconds
    /// (each failure is a debug record of class `EurekaInfoClient`).
    public static func describe(host: String, httpsPort: Int = httpsPort, httpPort: Int = httpPort, timeout: Double = 1,
                                group: EventLoopGroup, logSystem: LogSystem = .shared) async -> EurekaDeviceInfo? {
        let log = Logger(class: "EurekaInfoClient", system: logSystem).with(["device": .string(host)])
        let started = MonotonicClock.seconds()
        var result = await fetch(host: host, port: httpsPort, secure: true, timeout: timeout, group: group)
        if case .failure(.refused) = result {
            let left = timeout - (MonotonicClock.seconds() - started)
            if left > 0.01 { result = await fetch(host: host, port: httpPort, secure: false, timeout: left, group: group) }
        }
        switch result {
        case .success(let answer):
            guard let info = EurekaDeviceInfo.parse(body: answer.body, peerCommonName: answer.peerCommonName) else {
                log.debug("eureka_info of \(host) is not a device description", ["bytes": .int(answer.body.count)])
                return nil
            }
            log.debug("eureka_info of \(host): \(info.name ?? "no name"), id \(info.id ?? "none")", [
                "deviceName": .string(info.name ?? ""), "durationMs": .int(Int((MonotonicClock.seconds() - started) * 1000)),
            ])
            return info
        case .failure(let failure):
            log.debug("no eureka_info from \(host): \(failure)", ["durationMs": .int(Int((MonotonicClock.seconds() - started) * 1000))])
            return nil
        }
    }

    struct Answer: Sendable {
        var body: [UInt8]
        var peerCommonName: String?
    }

    enum Failure: Error, CustomStringConvertible {
        case refused(String)
        case failed(String)

        var description: String {
            switch self {
            case .refused(let why), .failed(let why): return why
            }
        }
    }

    /// One GET of ``path`` on `host`:`port`.
    static func fetch(host: String, port: Int, secure: Bool, timeout: Double, group: EventLoopGroup) async -> Result<Answer, Failure> {
        let loop = group.next()
        let deadline = TimeAmount.nanoseconds(Int64(min(max(timeout, 0.001), 60) * 1_000_000_000))
        let tls: NIOSSLContext?
        if secure {
            switch sharedTLSContext {
            case .success(let context): tls = context
            case .failure(let error): return .failure(.failed("cannot create a TLS context: \(error)"))
            }
        } else {
            tls = nil
        }
        let promise = loop.makePromise(of: Answer.self)
        let timer = loop.scheduleTask(in: deadline) {
            promise.fail(Failure.failed("no answer within \(timeout.formatted) s on port \(port)"))
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        headers.add(name: "User-Agent", value: "castline")
        headers.add(name: "Accept", value: "application/json")
        headers.add(name: "Connection", value: "close")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        let connecting = ClientBootstrap(group: loop)
            .connectTimeout(deadline)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tls { try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil)) }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(EurekaResponseHandler(request: request, promise: promise, secure: secure))
                }
            }
            .connect(host: host, port: port)
        connecting.whenComplete { result in
            switch result {
            case .success(let channel):
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
            case .failure(let error):
                let refused = (error as? NIOConnectionError)?.connectionErrors.contains {
                    ($0.error as? IOError)?.errnoCode == ECONNREFUSED
                } ?? ((error as? IOError)?.errnoCode == ECONNREFUSED)
                let reason = "cannot connect to port \(port): \(error)"
                promise.fail(refused ? Failure.refused(reason) : Failure.failed(reason))
            }
        }
        defer { timer.cancel() }
        do {
            return .success(try await promise.futureResult.get())
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(.failed("\(error)"))
        }
    }

    /// Devices present self-signed certificates: nothing to verify them against.
    private static let sharedTLSContext: Result<NIOSSLContext, Error> = Result {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        configuration.curves = [.x25519, .secp256r1, .secp384r1]
        return try NIOSSLContext(configuration: configuration)
    }
}

/// Sends the request when the channel is active and completes the promise with the body of a
/// 200 answer (and the TLS peer's common name); anything else fails it. Runs on the channel's loop.
private final class EurekaResponseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let request: HTTPRequestHead
    private let promise: EventLoopPromise<EurekaInfoClient.Answer>
    private let secure: Bool
    private var status: HTTPResponseStatus?
    private var body: [UInt8] = []

    init(request: HTTPRequestHead, promise: EventLoopPromise<EurekaInfoClient.Answer>, secure: Bool) {
        self.request = request
        self.promise = promise
        self.secure = secure
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= EurekaInfoClient.maximumBodyBytes else {
                promise.fail(EurekaInfoClient.Failure.failed("answer larger than \(EurekaInfoClient.maximumBodyBytes) bytes"))
                context.close(promise: nil)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard status == .ok else {
                promise.fail(EurekaInfoClient.Failure.failed("HTTP \(status.map { String($0.code) } ?? "?")"))
                return
            }
            var commonName: String?
            if secure, let der = try? context.pipeline.syncOperations.nioSSL_peerCertificate()?.toDERBytes() {
                commonName = (try? Certificate(derBytes: der))?.commonName
            }
            promise.succeed(EurekaInfoClient.Answer(body: body, peerCommonName: commonName))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(EurekaInfoClient.Failure.failed("the connection closed before the answer ended"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        promise.fail(EurekaInfoClient.Failure.failed("\(error)"))
        context.close(promise: nil)
    }
}
