/// Renders a `TimelineModel` as one self-contained HTML page: inline CSS and inline SVG, no fonts,
/// images or scripts fetched from anywhere. A few lines of inline JS show tooltips at once on hover;
/// without JS the page reads the same (every mark carries an SVG `<title>`, shown by the browser).
///
/// Stable hooks for tests: `#summary` (counts also as `data-*`), `#legend`, `#notes`, `#timeline`,
/// `.lane[data-device]`, `.session[data-session][data-state]`, `.segment.state-<name>`,
/// `.state-change`, `.request` (`.failed`), `.failure`, `.end-reason`, `.device-detail[data-device]`,
/// `.empty-message` (a model with nothing to draw), `.content-segment.<shown|announcement|not_shown|not_observed>`
/// (what the screen showed), `.story-event[data-kind]` (app stops, takeovers, owners,
/// announcements, pages, plugin failures), `table.story`, `table.content`.
package enum TimelineHTML {
    /// Request marks drawn per lane at most (failed requests are kept first); a note says when capped.
    package static let maxRequestMarksPerLane = 2_000
    /// Failure diamonds drawn per lane at most; a note says when capped.
    package static let maxFailureMarksPerLane = 2_000

    package static func render(_ model: TimelineModel) -> String {
        TimelinePage(model: model).render()
    }
}

// MARK: - Page

/// One rendering of a model: the page skeleton and its header here; the SVG, the tables, the
/// style and the text formatting in the `TimelinePage+…` files.
struct TimelinePage {
    let model: TimelineModel

    // Geometry of the SVG, in CSS pixels.
    static let width = 1240.0
    static let plotX0 = 220.0
    static let plotX1 = 1080.0
    static let axisHeight = 44.0
    static let lanePadTop = 10.0
    static let sessionRowHeight = 30.0
    static let barOffset = 8.0
    static let barHeight = 18.0
    static let requestRowHeight = 20.0
    static let failureRowHeight = 20.0
    /// What the screen showed (shown, not shown, not observed), above the sessions.
    static let contentRowHeight = 12.0
    /// The story: app stops, takeovers, owner changes, announcements, page switches, plugin failures.
    static let storyRowHeight = 20.0
    static let lanePadBottom = 8.0
    static let minLaneHeight = 92.0
    static let bottomAxisHeight = 26.0

    var plotWidth: Double { Self.plotX1 - Self.plotX0 }

    /// Shown time window: the model's range widened to every time in it; a zero-length range
    /// becomes one second centred on it.
    let viewStart: Int64
    let viewEnd: Int64

    init(model: TimelineModel) {
        self.model = model
        var lo = model.start
        var hi = max(model.start, model.end)
        for lane in model.lanes {
            for s in lane.sessions {
                lo = min(lo, s.start); hi = max(hi, s.start)
                if let e = s.end { lo = min(lo, e); hi = max(hi, e) }
                for c in s.states { lo = min(lo, c.time); hi = max(hi, c.time) }
            }
            for r in lane.requests { lo = min(lo, r.time); hi = max(hi, r.time) }
            for f in lane.failures { lo = min(lo, f.time); hi = max(hi, f.time) }
            for e in lane.story { lo = min(lo, e.time); hi = max(hi, e.time) }
        }
        if hi <= lo {
            lo = lo &- 500_000_000
            hi = lo &+ 1_000_000_000
        }
        viewStart = lo
        viewEnd = hi
    }

    var isEmpty: Bool {
        model.lanes.allSatisfy { $0.sessions.isEmpty && $0.requests.isEmpty && $0.failures.isEmpty && $0.story.isEmpty && $0.content.isEmpty }
    }

    func x(_ t: Int64) -> Double {
        let span = Double(viewEnd) - Double(viewStart)
        let (d, overflow) = t.subtractingReportingOverflow(viewStart)
        let offset = overflow ? (t < viewStart ? -Double.infinity : Double.infinity) : Double(d)
        let f = Swift.min(1, Swift.max(0, offset / span))
        return Self.plotX0 + f * plotWidth
    }

    func render() -> String {
        var out = ""
        out.reserveCapacity(64 * 1024)
        out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        out += "<title>\(esc(model.title.isEmpty ? "castline timeline" : model.title))</title>\n"
        out += "<style>\n\(Self.css)</style>\n</head>\n<body>\n"

        var notes = model.notes
        let drawn = model.lanes.map { lane -> (requests: [TimelineRequest], failures: [TimelineFailure]) in
            let r = sampleRequests(lane.requests)
            let f = sampleFailures(lane.failures)
            let name = displayName(lane)
            if r.count < lane.requests.count {
                let failed = lane.requests.lazy.filter(\.failed).count
                let keptFailed = r.lazy.filter(\.failed).count
                let failedNote = failed == 0 ? "" : keptFailed == failed
                    ? " (all \(grouped(failed)) failed ones kept)" : " (\(grouped(keptFailed)) of \(grouped(failed)) failed ones)"
                notes.append("\(name): drew \(grouped(r.count)) of \(grouped(lane.requests.count)) request marks\(failedNote); the tables count all of them")
            }
            if f.count < lane.failures.count {
                notes.append("\(name): drew \(grouped(f.count)) of \(grouped(lane.failures.count)) failure marks; the table lists all of them")
            }
            return (r, f)
        }

        out += header(notes: notes)
        if !isEmpty { out += legend() }
        if isEmpty {
            out += "<div id=\"timeline\" class=\"empty\"><p class=\"empty-message\">There are no sessions in these logs"
            out += model.lanes.isEmpty ? " (no device seen)." : " (\(grouped(model.lanes.count)) device\(model.lanes.count == 1 ? "" : "s") seen, nothing to draw)."
            out += "</p></div>\n"
        } else {
            if model.lanes.allSatisfy({ $0.sessions.isEmpty }) {
                out += "<p class=\"empty-message\">There are no sessions in these logs; only requests and failures are drawn.</p>\n"
            }
            out += timelineSVG(drawn: drawn)
            out += details()
        }
        out += "<div id=\"tip\" role=\"tooltip\"></div>\n"
        out += "<script>\n\(Self.script)</script>\n"
        out += "</body>\n</html>\n"
        return out
    }

    // MARK: Header, summary, legend

    func header(notes: [String]) -> String {
        let sessions = model.lanes.reduce(0) { $0 + $1.sessions.count }
        let open = model.lanes.reduce(0) { $0 + $1.sessions.filter { $0.end == nil }.count }
        // Traffic records' requests where logged (debug), else the sessions' summaries (info).
        let requests = model.lanes.reduce(0) { $0 + ($1.requests.isEmpty ? $1.summaryRequests : $1.requests.count) }
        let failedRequests = model.lanes.reduce(0) { $0 + ($1.requests.isEmpty ? $1.summaryFailedRequests : $1.requests.filter(\.failed).count) }
        let failures = model.lanes.reduce(0) { $0 + $1.failures.count }
        let plugins = model.lanes.reduce(0) { $0 + $1.story.filter { $0.kind == .plugin }.count }
        let end = max(model.start, model.end)
        var h = "<header>\n<h1>\(esc(model.title.isEmpty ? "castline timeline" : model.title))</h1>\n"
        h += "<p class=\"range\"><time datetime=\"\(iso(model.start))\">\(iso(model.start))</time> → "
        h += "<time datetime=\"\(iso(end))\">\(iso(end))</time> <span class=\"duration\">("
        h += "\(esc(formatDuration(end - model.start))))</span></p>\n"
        h += "<ul id=\"summary\" data-devices=\"\(model.lanes.count)\" data-sessions=\"\(sessions)\" "
        h += "data-open-sessions=\"\(open)\" data-requests=\"\(requests)\" data-failed-requests=\"\(failedRequests)\" "
        h += "data-failures=\"\(failures)\">\n"
        h += "<li><b>\(grouped(model.lanes.count))</b> device\(model.lanes.count == 1 ? "" : "s")</li>\n"
        h += "<li><b>\(grouped(sessions))</b> session\(sessions == 1 ? "" : "s")"
        h += open > 0 ? " <span class=\"muted\">(\(grouped(open)) open at the end)</span></li>\n" : "</li>\n"
        h += "<li><b>\(grouped(requests))</b> request\(requests == 1 ? "" : "s")"
        h += failedRequests > 0 ? " <span class=\"bad\">(\(grouped(failedRequests)) failed)</span></li>\n" : "</li>\n"
        h += "<li class=\"\(failures > 0 ? "bad" : "")\"><b>\(grouped(failures))</b> failure\(failures == 1 ? "" : "s")</li>\n"
        if plugins > 0 { h += "<li class=\"bad\" data-plugin-failures=\"\(plugins)\"><b>\(grouped(plugins))</b> plugin failure\(plugins == 1 ? "" : "s")</li>\n" }
        h += "</ul>\n"
        if !notes.isEmpty {
            h += "<ul id=\"notes\">\n"
            for n in notes { h += "<li>\(esc(n))</li>\n" }
            h += "</ul>\n"
        }
        h += "</header>\n"
        return h
    }

    func legend() -> String {
        func swatch(_ state: String, _ label: String) -> String {
            "<span class=\"key\"><svg width=\"22\" height=\"12\" aria-hidden=\"true\"><rect class=\"segment state-\(state)\" x=\"0\" y=\"0\" width=\"22\" height=\"12\"/></svg>\(label)</span>"
        }
        var l = "<div id=\"legend\">\n"
        l += swatch("connecting", "connecting")
        l += swatch("connected", "connected")
        l += swatch("suspended", "suspended")
        l += swatch("resuming", "resuming")
        l += swatch("ending", "ending / ended")
        l += swatch("failed", "failed")
        l += "<span class=\"key\"><svg width=\"12\" height=\"14\" aria-hidden=\"true\"><path class=\"marker\" d=\"M2,1 L10,1 L6,6 Z\"/><line x1=\"6\" y1=\"6\" x2=\"6\" y2=\"14\" stroke=\"#1f2328\"/></svg>state change</span>"
        l += "<span class=\"key\"><svg width=\"10\" height=\"14\" aria-hidden=\"true\"><rect class=\"request\" x=\"4\" y=\"2\" width=\"2\" height=\"10\"/></svg>request</span>"
        l += "<span class=\"key\"><svg width=\"10\" height=\"14\" aria-hidden=\"true\"><rect class=\"request failed\" x=\"3.5\" y=\"0\" width=\"3\" height=\"14\"/></svg>failed request</span>"
        l += "<span class=\"key\"><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><path class=\"failure\" d=\"M7,1 L13,7 L7,13 L1,7 Z\"/></svg>failure</span>"
        l += "<br><span class=\"key\">on the screen (the strip above the sessions):</span>"
        for (cls, label) in [("shown", "shown"), ("announcement", "announcement"), ("not_shown", "not shown"), ("not_observed", "not observed")] {
            l += "<span class=\"key\"><svg width=\"22\" height=\"10\" aria-hidden=\"true\"><rect class=\"content-segment \(cls)\" x=\"0\" y=\"0\" width=\"22\" height=\"10\"/></svg>\(label)</span>"
        }
        l += "<br><span class=\"key\">what happened (the row below):</span>"
        for kind in TimelineEvent.Kind.allCases {
            l += "<span class=\"key\"><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><circle class=\"story-event \(kind.rawValue)\" cx=\"6\" cy=\"6\" r=\"5\"/></svg>\(kind == .app ? "app stopped" : kind.rawValue)</span>"
        }
        l += "<span class=\"key hint\">hover any mark for details · times in UTC</span>"
        l += "\n</div>\n"
        return l
    }
}
