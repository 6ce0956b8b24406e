import CastCore
import CastlineDaemon
import NIOHTTP1

/// What a request asks for: a control command, the event stream, or the metrics. The table of
/// routes is the OpenAPI document's (`docs/api/openapi.yaml`); ``APIRouteTests`` keep both in step.
enum APIRoute: Equatable {
    case command(ControlCommand)
    case events(Set<HubEvents.Kind>?)
    case metrics

    /// Why a request has no route: the error to answer with, and for a 405 the methods allowed.
    struct Failure: Error, Equatable {
        let error: ControlError
        var allow: [HTTPMethod] = []
    }

    /// The route of a request, or the error to answer with (404 for an unknown path, 405 for a
    /// known path with the wrong method, 400 for a malformed body or query).
    static func resolve(method: HTTPMethod, target: String, body: [UInt8]) -> Result<APIRoute, Failure> {
        let (path, query) = split(target)
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard let decoded = decode(segments) else {
            return .failure(Failure(error: .usage("bad_path", "the path is not valid percent-encoded UTF-8")))
        }
        var allowed: [HTTPMethod] = []
        /// The body as JSON; no body at all is an empty object (a literal `null` is not).
        func json() throws(ControlError) -> JSONValue {
            guard !body.isEmpty else { return .object(JSONObject()) }
            let value: JSONValue
            do { value = try JSONValue.parse(String(decoding: body, as: UTF8.self)) } catch {
                throw ControlError.usage("bad_json", "the request body is not JSON: \(error)")
            }
            guard case .object = value else { throw ControlError.usage("body_not_object", "the request body must be a JSON object") }
            return value
        }
        func allow(_ methods: [HTTPMethod]) throws(ControlError) {
            guard methods.contains(method) else {
                allowed = methods
                throw ControlError(.methodNotAllowed, "method_not_allowed",
                                   "\(method.rawValue) is not allowed on \(path) (allowed: \(methods.map(\.rawValue).joined(separator: ", ")))")
            }
        }
        do throws(ControlError) {
            switch decoded {
            case ["metrics"]:
                try allow([.GET])
                return .success(.metrics)
            case ["v1"], ["v1", "status"]:
                try allow([.GET])
                return .success(.command(.status))
            case ["v1", "devices"]:
                try allow([.GET])
                return .success(.command(.listDevices))
            case ["v1", "plugins"]:
                try allow([.GET])
                return .success(.command(.listPlugins))
            case let s where s.count == 3 && s[0] == "v1" && s[1] == "devices" && !s[2].isEmpty:
                try allow([.GET])
                return .success(.command(.showDevice(s[2])))
            case let s where s.count == 4 && s[0] == "v1" && s[1] == "devices" && !s[2].isEmpty:
                try allow([.POST])
                return .success(.command(try ControlCommand.device(s[2], action: s[3], body: try json())))
            case let s where s.count == 5 && s[0] == "v1" && s[1] == "devices" && s[3] == "channels" && !s[2].isEmpty:
                try allow([.POST])
                return .success(.command(.channel(s[2], namespace: s[4], try ChannelArguments(json: try json()))))
            case ["v1", "jobs"]:
                try allow([.GET])
                return .success(.command(.listJobs))
            case let s where s.count == 3 && s[0] == "v1" && s[1] == "jobs" && !s[2].isEmpty:
                try allow([.GET, .PUT, .DELETE])
                switch method {
                case .PUT:
                    guard !body.isEmpty else { throw ControlError.usage("missing_job", "PUT a job: {\"devices\": [...], \"media\": {...}}") }
                    return .success(.command(.putJob(s[2], String(decoding: body, as: UTF8.self))))
                case .DELETE: return .success(.command(.deleteJob(s[2])))
                default: return .success(.command(.showJob(s[2])))
                }
            case let s where s.count == 4 && s[0] == "v1" && s[1] == "jobs" && !s[2].isEmpty && s[3] == "run":
                try allow([.POST])
                let args = try ArgumentObject(body.isEmpty ? .object([:]) : try json(), allowed: ["wait"], what: "run")
                return .success(.command(.runJob(s[2], wait: try args.bool("wait") ?? true)))
            case ["v1", "events"]:
                try allow([.GET])
                return .success(.events(try kinds(query["kinds"])))
            case ["v1", "logging"]:
                try allow([.GET, .PUT])
                return .success(.command(method == .PUT ? try ControlCommand.setLogging(body: try json()) : .showLogging))
            case ["v1", "logging", "explain"]:
                try allow([.GET])
                guard let className = query["class"], !className.isEmpty else {
                    throw ControlError.usage("missing_class", "explain needs ?class=CLASS (and &function=F)")
                }
                return .success(.command(.explainLogging(className: className, function: query["function"] ?? "")))
            default:
                return .failure(Failure(error: ControlError(.notFound, "unknown_route", "no route \(path) (see docs/api/openapi.yaml)")))
            }
        } catch {
            return .failure(Failure(error: error, allow: allowed))
        }
    }

    static func kinds(_ text: String?) throws(ControlError) -> Set<HubEvents.Kind>? {
        guard let text, !text.isEmpty else { return nil }
        var kinds = Set<HubEvents.Kind>()
        for name in text.split(separator: ",") {
            guard let kind = HubEvents.Kind(rawValue: String(name)) else {
                throw ControlError.usage("bad_kind", "events: unknown kind \"\(name)\" (\(HubEvents.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            kinds.insert(kind)
        }
        return kinds
    }

    /// The path and the query's parameters (percent-decoded; `+` is a space).
    static func split(_ target: String) -> (String, [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            // `=`, `k=` and `=v` are parameters too (empty key or value), never a crash.
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = percentDecoded(String(parts[0]).replacingPlus) ?? String(parts[0])
            let value = parts.count > 1 ? (percentDecoded(String(parts[1]).replacingPlus) ?? String(parts[1])) : ""
            query[key] = value
        }
        return (String(target[..<mark]), query)
    }

    static func decode(_ segments: [String]) -> [String]? {
        var result: [String] = []
        for segment in segments {
            guard let text = percentDecoded(segment) else { return nil }
            result.append(text)
        }
        return result
    }

    /// `%XX` sequences as bytes, the result as UTF-8; nil for a bad escape or invalid UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.popFirst().flatMap(hex), let low = iterator.popFirst().flatMap(hex) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x37
        case 0x61...0x66: return c - 0x57
        default: return nil
        }
    }
}

extension String {
    fileprivate var replacingPlus: String { String(map { $0 == "+" ? " " : $0 }) }
}
