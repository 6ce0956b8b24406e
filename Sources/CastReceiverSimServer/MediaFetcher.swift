import CastHTTP
import NIOCore

/// Fetches the start of a media URL the way a Cast device does after LOAD: one
/// `GET <url>` with `Range: bytes=0-<n-1>`, reading the response head and at most `n` body bytes.
///
/// Plain `http://` only (anything else is an `unsupported scheme` result). Host forms:
/// `name`, `1.2.3.4`, `[::1]`, each with an optional `:port` (default 80). Bounded: the
/// body is cut at `n` bytes (then the connection is closed), the head by NIO's decoder
/// limits, and the whole exchange by a timeout. The request is CastHTTP's ``HTTPExchange``
/// and the URL its ``HTTPURL``: what is fetched here is what castline's own client would fetch.
public enum MediaFetcher {
    /// Fetches the first `rangeBytes` bytes of `url`. The future always succeeds: failures
    /// (bad URL, connect error, timeout, protocol error) are in ``MediaFetchResult/error``.
    /// `source`: the local address to fetch from (a simulated device's own, as a real device
    /// fetches from its address); nil or an unspecified address lets the kernel choose.
    public static func fetch(
        url: String, rangeBytes: Int = 65536, timeout: Double = 5,
        group: EventLoopGroup, source: String? = nil
    ) -> EventLoopFuture<MediaFetchResult> {
        let target: HTTPURL
        switch HTTPURL.parse(url) {
        case .success(let parsed) where !parsed.secure: target = parsed
        case .success: return group.next().makeSucceededFuture(MediaFetchResult(url: url, error: HTTPURL.Invalid.scheme("https").description))
        case .failure(let invalid): return group.next().makeSucceededFuture(MediaFetchResult(url: url, error: invalid.description))
        }
        let limit = max(1, rangeBytes)
        let seconds = timeout.isFinite ? min(max(timeout, 0.001), 3600) : 3600
        return HTTPExchange.exchange(
            .GET, url: target, headers: [("Range", "bytes=0-\(limit - 1)"), ("Accept", "*/*")],
            userAgent: "castline-receiver-sim", source: source, timeout: seconds, maximumBody: limit, group: group
        )
        .map { outcome in
            var result = MediaFetchResult(url: url)
            if let answer = outcome.answer {
                result.status = answer.status
                result.contentRange = answer.headers.first(name: "Content-Range")
                result.contentType = answer.headers.first(name: "Content-Type")
                result.allowOrigin = answer.headers.first(name: "Access-Control-Allow-Origin")
                result.bytes = answer.body.count
                result.prefix = Array(answer.body.prefix(MediaFetchResult.prefixLength))
            }
            switch outcome.end {
            case .complete: break
            case .timedOut: result.error = "timed out after \(seconds) s"
            case .closed:
                result.error =
                    outcome.answer == nil
                    ? "connection closed before a response"
                    : "connection closed after \(result.bytes) body bytes"
            case .failed(let failure): result.error = failure.description
            }
            return result
        }
    }
}
