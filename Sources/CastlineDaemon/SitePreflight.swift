import CastCore
import CastHTTP
import NIOCore
import NIOHTTP1

/// What castline learns of a web page before it sends it to a TV, and what that means for
/// DashCast: a page that refuses to be framed (`X-Frame-Options`, CSP `frame-ancestors`) is
/// blank in DashCast's iframe, so it is sent with `force`; an http page inside DashCast's https
/// receiver is blocked as mixed content, so it is forced too; a page that cannot be fetched
/// fails before anything is launched on the TV.
package struct SitePreflight: Sendable, Equatable {
    /// The URL after redirects.
    package var finalURL: String
    package var status: Int
    package var contentType: String?
    /// Why the page cannot be framed (the header that says so), nil when it can.
    package var refusesFrames: String?
    /// The page is http: an https receiver blocks it in a frame (mixed content).
    package var mixedContent: Bool
    /// The page's `<title>` (from its first 64 KiB), what views show for the TV.
    package var title: String?

    /// Whether DashCast must navigate to the page itself, and why.
    package var forceReason: String? {
        if let refusesFrames { return "the page refuses to be framed (\(refusesFrames))" }
        if mixedContent { return "the page is http, and DashCast's https receiver blocks http frames as mixed content" }
        return nil
    }

    /// HTML: what a media receiver cannot show and DashCast can.
    package static func isWebPage(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";").first.map { String($0).trimmingSpaces.lowercased() } ?? ""
        return type == "text/html" || type == "application/xhtml+xml"
    }

    /// The text of the first `<title>` in `html` (entities for &, <, >, " and ' decoded, white
    /// space folded, at most 200 characters); nil when there is none. Pure.
    package static func pageTitle(_ html: [UInt8]) -> String? {
        /// The index of `needle` (ASCII, lowercase) in `html` from `from`, ignoring ASCII case.
        func find(_ needle: [UInt8], from: Int) -> Int? {
            guard needle.count <= html.count else { return nil }
            var i = from
            while i + needle.count <= html.count {
                var j = 0
                while j < needle.count, (html[i + j] | 0x20) == needle[j] || html[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
                i += 1
            }
            return nil
        }
        guard let open = find(Array("<title".utf8), from: 0),
              let end = html[open...].firstIndex(of: UInt8(ascii: ">")),
              let close = find(Array("</title".utf8), from: end) else { return nil }
        var title = String(decoding: html[(end + 1)..<close], as: UTF8.self)
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&apos;", "'"), ("&amp;", "&")] {
            title = title.split(separator: entity, omittingEmptySubsequences: false).joined(separator: character)
        }
        let folded = title.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).joined(separator: " ")
        return folded.isEmpty ? nil : String(folded.prefix(200))
    }

    /// Redirects followed at most.
    static let maximumRedirects = 5

    /// Judges one answer's headers (pure).
    package static func judge(url: String, status: Int, headers: [(String, String)]) -> SitePreflight {
        func header(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name }.map(\.1) }
        let type = header("content-type").first.map { String($0.split(separator: ";")[0]).trimmingSpaces.lowercased() }
        var refusal: String?
        if let frameOptions = header("x-frame-options").first {
            let value = frameOptions.trimmingSpaces.uppercased()
            if value == "DENY" || value == "SAMEORIGIN" || value.hasPrefix("ALLOW-FROM") { refusal = "X-Frame-Options: \(value)" }
        }
        for policy in header("content-security-policy") {
            for directive in policy.split(separator: ";") {
                let words = directive.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { String($0) }
                guard words.first?.lowercased() == "frame-ancestors" else { continue }
                let sources = words.dropFirst().map { $0.lowercased() }
                // `*` and `https:` let any https page (DashCast's receiver) frame it; anything
                // else ('none', 'self', named hosts) keeps it out.
                if !sources.contains("*") && !sources.contains("https:") {
                    refusal = "Content-Security-Policy: frame-ancestors \(sources.isEmpty ? "(none)" : sources.joined(separator: " "))"
                }
            }
        }
        return SitePreflight(finalURL: url, status: status, contentType: type, refusesFrames: refusal,
                             mixedContent: url.lowercased().hasPrefix("http://"))
    }

    /// Fetches `url`'s head (HEAD, or GET where HEAD is not answered), following redirects; a
    /// page that cannot be fetched, or answers an error status, fails with the reason.
    package static func check(_ url: String, timeout: Double = 5, group: EventLoopGroup) async throws(ControlError) -> SitePreflight {
        guard var target = HTTPURL(url) else { throw ControlError.usage("bad_url", "site: \"\(url)\" is not an http(s) URL") }
        for _ in 0...maximumRedirects {
            var answer = await HTTPExchange.request(.HEAD, url: target, timeout: timeout, maximumBody: 0, group: group)
            if case .success(let head) = answer, head.status == 405 || head.status == 501 {
                answer = await HTTPExchange.request(.GET, url: target, timeout: timeout, maximumBody: 1, group: group)
            }
            let head: HTTPExchange.Answer
            switch answer {
            case .success(let a): head = a
            case .failure(let failure):
                throw ControlError(.refused, "site_unreachable", "\(target) cannot be fetched: \(failure); nothing was cast (the TV could not show it either)")
            }
            if [301, 302, 303, 307, 308].contains(head.status), let location = head.headers.first(name: "location"),
               let next = target.resolving(location) {
                target = next
                continue
            }
            guard head.status < 400 else {
                throw ControlError(.refused, "site_http_error",
                                   "\(target) answers HTTP \(head.status); nothing was cast (use --no-check, \"preflight\": false, to send it anyway)")
            }
            var judged = judge(url: target.description, status: head.status, headers: head.headers.map { ($0.name, $0.value) })
            if judged.contentType.map(isWebPage) ?? false,
               case .success(let page) = await HTTPExchange.request(.GET, url: target, headers: [("Range", "bytes=0-65535")], timeout: 2,
                                                                  maximumBody: 65536, group: group) {
                judged.title = pageTitle(page.body)
            }
            return judged
        }
        throw ControlError(.refused, "site_redirect_loop", "\(url) redirects more than \(maximumRedirects) times; nothing was cast")
    }
}
