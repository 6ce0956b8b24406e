import CastCore

/// Every action of the control plane, in the OpenAPI document's order. Each has its rows in the
/// route table (``routes``, a switch the compiler holds complete) and each ``ControlCommand``
/// names its action (``ControlCommand/action``, a switch too): adding an action means one
/// command case, one handler in ``ControlPlane``'s `run`, one case here with its row.
package enum ControlAction: String, Sendable, CaseIterable {
    case status, listDevices, showDevice
    case cast, site, announce, play, pause, stop, seek, volume, mute, queue, channel
    case sync, listWalls, stopWall
    case listPlugins, listJobs, showJob, putJob, deleteJob, runJob
    case events, showLogging, setLogging, explainLogging, metrics

    /// This action's routes (two for `status`: `/v1` and `/v1/status`).
    package var routes: [ControlRoute] {
        switch self {
        case .status: return ControlRoute.status
        case .listDevices: return [ControlRoute.listDevices]
        case .showDevice: return [ControlRoute.showDevice]
        case .cast: return [ControlRoute.cast]
        case .site: return [ControlRoute.site]
        case .announce: return [ControlRoute.announce]
        case .play: return [ControlRoute.play]
        case .pause: return [ControlRoute.pause]
        case .stop: return [ControlRoute.stop]
        case .seek: return [ControlRoute.seek]
        case .volume: return [ControlRoute.volume]
        case .mute: return [ControlRoute.mute]
        case .queue: return [ControlRoute.queue]
        case .channel: return [ControlRoute.channel]
        case .sync: return [ControlRoute.sync]
        case .listWalls: return [ControlRoute.listWalls]
        case .stopWall: return [ControlRoute.stopWall]
        case .listPlugins: return [ControlRoute.listPlugins]
        case .listJobs: return [ControlRoute.listJobs]
        case .showJob: return [ControlRoute.showJob]
        case .putJob: return [ControlRoute.putJob]
        case .deleteJob: return [ControlRoute.deleteJob]
        case .runJob: return [ControlRoute.runJob]
        case .events: return [ControlRoute.events]
        case .showLogging: return [ControlRoute.showLogging]
        case .setLogging: return [ControlRoute.setLogging]
        case .explainLogging: return [ControlRoute.explainLogging]
        case .metrics: return [ControlRoute.metrics]
        }
    }

    /// Every route, in the document's order (built once).
    package static let table: [ControlRoute] = allCases.flatMap(\.routes)

    /// The action's first route (the one its name and body fields are read from).
    package var route: ControlRoute { Self.table.first { $0.action == self }! }

    /// The action's name in logs; for a device action its name in paths, MQTT and the CLI.
    package var name: String { route.name }

    /// The device actions (`POST /v1/devices/{device}/{action}`), in the table's order.
    package static let deviceActions: [ControlRoute] = table.filter(\.isDeviceAction)

    /// Why a request has no route: the error to answer with, and for a 405 the methods allowed.
    package struct RouteFailure: Error, Equatable {
        package let error: ControlError
        package var allow: [ControlRoute.Method] = []
    }

    /// The route of a request, decoded: 404 for an unknown path (`unknown_action` for a device
    /// action the table lacks), 405 for a known path with another method (with the methods
    /// allowed, in the table's order), 400 for a malformed body or query. `segments`: the path's
    /// segments after the leading slash, percent-decoded.
    package static func resolve(method: String, segments: [String], query: [String: String] = [:],
                                body: [UInt8] = []) -> Result<RouteTarget, RouteFailure> {
        let path = "/" + segments.joined(separator: "/")
        let matches = table.compactMap { route in route.match(segments).map { (route, $0) } }
        guard !matches.isEmpty else {
            // `/v1/devices/{device}/<anything>`: a device action this table does not have.
            if segments.count == 4, segments[0] == "v1", segments[1] == "devices", !segments[2].isEmpty {
                guard method == ControlRoute.Method.POST.rawValue else { return .failure(notAllowed(method, path, [.POST])) }
                let names = deviceActions.map(\.name).joined(separator: ", ")
                return .failure(RouteFailure(error: ControlError(.notFound, "unknown_action",
                                                                 "no device action \"\(segments[3])\" (\(names), channels/NAMESPACE)")))
            }
            return .failure(RouteFailure(error: ControlError(.notFound, "unknown_route", "no route \(path) (see docs/api/openapi.yaml)")))
        }
        guard let (route, parameters) = matches.first(where: { $0.0.method.rawValue == method }) else {
            return .failure(notAllowed(method, path, matches.map(\.0.method)))
        }
        do throws(ControlError) {
            return .success(try route.decode(RouteRequest(route: route, parameters: parameters, query: query, body: body)))
        } catch {
            return .failure(RouteFailure(error: error))
        }
    }

    static func notAllowed(_ method: String, _ path: String, _ allowed: [ControlRoute.Method]) -> RouteFailure {
        RouteFailure(error: ControlError(.methodNotAllowed, "method_not_allowed",
                                         "\(method) is not allowed on \(path) (allowed: \(allowed.map(\.rawValue).joined(separator: ", ")))"),
                     allow: allowed)
    }

    /// A device action by its name with its body, decoded by its row (direct mode: the CLI's
    /// hub in its own process takes the same names and bodies as the API).
    package static func device(_ device: String, action: String, body: JSONValue) throws(ControlError) -> ControlCommand {
        let raw = Array(body.serialized().utf8)
        switch resolve(method: ControlRoute.Method.POST.rawValue, segments: ["v1", "devices", device, action], body: raw) {
        case .success(.command(let command)): return command
        case .success: throw ControlError(.internal, "not_a_command", "\(action) is not a device command")
        case .failure(let failure): throw failure.error
        }
    }
}
