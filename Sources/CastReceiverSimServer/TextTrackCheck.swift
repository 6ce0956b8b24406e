import CastCore
import CastReceiverSim
import NIOCore

/// A LOAD's text tracks, fetched and judged as a receiver page would: the track must answer 2xx,
/// carry `Access-Control-Allow-Origin` (the receiver is a page of another origin: without it the
/// browser hides the response), and be WebVTT (the body starts with `WEBVTT`). Any other track
/// fails the LOAD with **600** TEXT_UNKNOWN. Only loopback `http://` tracks are fetched.
struct TextTrackCheck: Equatable, Sendable {
    var url: String
    var status: Int?
    var allowOrigin: String?
    var isWebVTT: Bool
    /// nil: fine.
    var problem: String?

    static func judge(_ result: MediaFetchResult) -> TextTrackCheck {
        var check = TextTrackCheck(url: result.url, status: result.status, allowOrigin: result.allowOrigin, isWebVTT: false)
        var body = result.prefix
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body.removeFirst(3) }
        check.isWebVTT = body.starts(with: Array("WEBVTT".utf8)) && (body.count == 6 || [0x20, 0x09, 0x0A, 0x0D].contains(body[6]))
        if let status = result.status, !(200..<300).contains(status) {
            check.problem = "text track \(result.url): HTTP \(status)"
        } else if result.status == nil {
            check.problem = "text track \(result.url): \(result.error ?? "no response")"
        } else if result.allowOrigin == nil {
            check.problem = "text track \(result.url) has no Access-Control-Allow-Origin header: the receiver page may not read it"
        } else if !check.isWebVTT {
            check.problem = "text track \(result.url) is not WebVTT (it does not start with WEBVTT)"
        }
        return check
    }

    var json: JSONValue {
        var o = JSONObject()
        o.append(key: "url", value: .string(url))
        o.append(key: "status", value: status.map { .int(Int64($0)) } ?? .null)
        o.append(key: "cors", value: allowOrigin.map(JSONValue.string) ?? .null)
        o.append(key: "webvtt", value: .bool(isWebVTT))
        if let problem { o.append(key: "problem", value: .string(problem)) }
        return .object(o)
    }

    /// Fetches every loopback track of `urls` (first 64 KiB each); the future always succeeds.
    static func fetchAll(_ urls: [String], timeout: Double, group: EventLoopGroup, source: String? = nil) -> EventLoopFuture<[TextTrackCheck]> {
        let loop = group.next()
        let checkable = urls.filter(MediaURLPolicy.isCheckable)
        let fetches = checkable.map { MediaFetcher.fetch(url: $0, timeout: timeout, group: loop, source: source).map(judge) }
        return EventLoopFuture.whenAllSucceed(fetches, on: loop)
    }
}
