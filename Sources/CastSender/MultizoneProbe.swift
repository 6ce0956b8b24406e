import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore

/// Asks a speaker group for its members: TLS, CONNECT `receiver-0`, multizone `GET_STATUS`,
/// close. What `discover` uses to show a group with its member names. Bounded by `timeout`
/// for the connect and again for the reply.
public enum MultizoneProbe {
    /// The group's members, or why they could not be read.
    public static func members(of device: CastDevice, group: EventLoopGroup, timeout: Double = 3,
                               logSystem: LogSystem = .shared) async -> Result<[MultizoneView.Member], MultizoneProbeError> {
        var options = CastConnectionOptions()
        options.connectTimeout = timeout
        options.logSystem = logSystem
        options.senderID = "sender-probe"
        options.connectFailureLevel = .debug
        let connection: CastConnection
        do {
            connection = try await CastConnection.connect(host: device.host, port: device.port, options: options, group: group)
        } catch {
            return .failure(MultizoneProbeError(reason: "\(error)"))
        }
        let connect = ConnectionMessage.connect(ConnectRequest(userAgent: "castline")).json
        connection.enqueue(CastMessage(source: "sender-probe", destination: "receiver-0", namespace: .connection, json: connect),
                           flush: false)
        let status = connection.request(
            source: "sender-probe", destination: "receiver-0", namespace: .multizone, type: "GET_STATUS", timeout: timeout,
            build: { ["type": "GET_STATUS", "requestId": .int(Int64($0.rawValue))] },
            map: { payload -> Result<[MultizoneView.Member], CastRequestError> in
                guard case .custom(let json) = payload, json["type"]?.string == "MULTIZONE_STATUS" else {
                    return .failure(.deviceError(nil, ErrorReason(rawValue: "unexpected reply \(payload.typeName ?? "?")")))
                }
                var view = MultizoneView()
                _ = view.apply(json)
                return .success(view.members)
            })
        let result: Result<[MultizoneView.Member], MultizoneProbeError>
        do {
            result = .success(try await status.value())
        } catch {
            result = .failure(MultizoneProbeError(reason: "multizone GET_STATUS: \(error)"))
        }
        await connection.close()
        return result
    }
}

/// Why a group's members could not be read.
public struct MultizoneProbeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
