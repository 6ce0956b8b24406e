import CastCore
import CastlineDaemon
import NIOHTTP1

/// The control API without HTTP, for a bridge in the daemon's process (the MQTT bridge): a
/// request in the API's shape (`{"method", "path", "body"}`) is routed by ``APIRoute`` and run on
/// the ``ControlPlane`` like an HTTP request, and answered with the same status and JSON.
package enum InProcessRequest {
    /// The status and JSON body the HTTP API would answer `request` with.
    package static func answer(_ request: JSONValue, plane: ControlPlane) async -> (status: Int, body: JSONValue) {
        guard let methodName = request["method"]?.string, let path = request["path"]?.string, path.hasPrefix("/") else {
            let error = ControlError.usage("bad_request", "a request is {\"method\": \"GET|POST|PUT|DELETE\", \"path\": \"/v1/...\", \"body\": {...}}")
            return (error.httpStatus, error.json)
        }
        let method = HTTPMethod(rawValue: methodName.uppercased())
        var body: [UInt8] = []
        if let value = request["body"], value != .null { body = Array(value.serialized().utf8) }
        switch APIRoute.resolve(method: method, target: path, body: body) {
        case .failure(let failure):
            return (failure.error.httpStatus, failure.error.json)
        case .success(.events), .success(.metrics):
            let error = ControlError.usage("not_a_request", "\(APIHandler.pathOnly(path)) is a stream or a scrape, not a request: a bridge subscribes to events")
            return (error.httpStatus, error.json)
        case .success(.command(let command)):
            let (status, json) = await APIHandler.run(command, on: plane)
            return (Int(status.code), json)
        }
    }

    /// The hub's events of the kinds named (every kind when nil), as the JSON objects
    /// `GET /v1/events` carries; a usage error for an unknown kind.
    package static func events(_ hub: HubEvents, kinds: [String]?) -> Result<(AsyncStream<JSONValue>, cancel: @Sendable () -> Void), ControlError> {
        let set: Set<HubEvents.Kind>?
        do { set = try HubEvents.kinds(kinds?.joined(separator: ",")) } catch { return .failure(error) }
        let subscription = hub.subscribe(set)
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .bufferingNewest(HubEvents.bufferSize))
        let pump = Task {
            for await event in subscription.events { continuation.yield(event.json) }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            pump.cancel()
            subscription.cancel()
        }
        return .success((stream, { continuation.finish(); subscription.cancel(); pump.cancel() }))
    }
}
