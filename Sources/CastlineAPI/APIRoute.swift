import CastCore
import CastlineDaemon
import NIOHTTP1

/// The HTTP face of the route table (``ControlAction/routes``): a request's method and target
/// (path and query, percent-encoded) resolved to what it asks for, a control command, the event
/// stream or the metrics. The table is also where `docs/api/openapi.yaml` comes from
/// (``OpenAPIDocument``); `Tests/CastlineAPITests/APIRouteTests` hold every row to its route.
enum APIRoute {
    /// Why a request has no route: the error to answer with, and for a 405 the methods allowed.
    struct Failure: Error, Equatable {
        let error: ControlError
        var allow: [HTTPMethod] = []
    }

    /// The route of a request, or the error to answer with (404 for an unknown path, 405 for a
    /// known path with the wrong method, 400 for a malformed path, body or query).
    static func resolve(method: HTTPMethod, target: String, body: [UInt8]) -> Result<RouteTarget, Failure> {
        let (path, query) = split(target)
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard let decoded = decode(segments) else {
            return .failure(Failure(error: .usage("bad_path", "the path is not valid percent-encoded UTF-8")))
        }
        return ControlAction.resolve(method: method.rawValue, segments: decoded, query: query, body: body).mapError { failure in
            Failure(error: failure.error, allow: failure.allow.map { HTTPMethod(rawValue: $0.rawValue) })
        }
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
