/// Renders a `TimelineModel` as one self-contained HTML page: inline CSS and inline SVG, no fonts,
/// images or scripts fetched from anywhere. A few lines of inline JS show tooltips at once on hover;
/// without JS the page reads the same (every mark carries an SVG `<title>`, shown by the browser).
///
/// Stable hooks for tests: `#summary` (counts also as `data-*`), `#legend`, `#notes`, `#timeline`,
/// `.lane[data-device]`, `.session[data-session][data-state]`, `.segment.state-<name>`,
/// `.state-change`, `.request` (`.failed`), `.failure`, `.end-reason`, `.device-detail[data-device]`,
/// `.empty-message` (a model with nothing to draw).
public enum TimelineHTML {
    /// Request marks drawn per lane at most (failed requests are kept first); a note says when capped.
    public static let maxRequestMarksPerLane = 2_000
    /// Failure diamonds drawn per lane at most; a note says when capped.
    public static let maxFailureMarksPerLane = 2_000

    public static func render(_ model: TimelineModel) -> String {
        TimelinePage(model: model).render()
    }
}

// MARK: - Page

private struct TimelinePage {
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
        }
        if hi <= lo {
            lo = lo &- 500_000_000
            hi = lo &+ 1_000_000_000
        }
        viewStart = lo
        viewEnd = hi
    }

    var isEmpty: Bool {
        model.lanes.allSatisfy { $0.sessions.isEmpty && $0.requests.isEmpty && $0.failures.isEmpty }
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
        let requests = model.lanes.reduce(0) { $0 + $1.requests.count }
        let failedRequests = model.lanes.reduce(0) { $0 + $1.requests.filter(\.failed).count }
        let failures = model.lanes.reduce(0) { $0 + $1.failures.count }
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
        l += "<span class=\"key hint\">hover any mark for details · times in UTC</span>"
        l += "\n</div>\n"
        return l
    }

    // MARK: The SVG

    struct LaneLayout {
        var rows: Int
        var rowOf: [Int]  // per session index in `sorted`
        var sorted: [TimelineSession]
        var height: Double
    }

    func layout(_ lane: TimelineLane) -> LaneLayout {
        let sorted = lane.sessions.enumerated().sorted { a, b in
            a.element.start != b.element.start ? a.element.start < b.element.start : a.offset < b.offset
        }.map(\.element)
        var rowEnds: [Double] = []
        var rowOf: [Int] = []
        for s in sorted {
            let x0 = x(s.start)
            let x1 = max(x0 + 2, s.end.map(x) ?? Self.plotX1)
            let extent = x1 + 6 + textWidth(endLabel(s).text, size: 11) + 10
            if let r = rowEnds.firstIndex(where: { $0 <= x0 }) {
                rowEnds[r] = extent
                rowOf.append(r)
            } else {
                rowEnds.append(extent)
                rowOf.append(rowEnds.count - 1)
            }
        }
        let rows = max(1, rowEnds.count)
        let h = Self.lanePadTop + Double(rows) * Self.sessionRowHeight + Self.requestRowHeight
            + Self.failureRowHeight + Self.lanePadBottom
        return LaneLayout(rows: rows, rowOf: rowOf, sorted: sorted, height: max(Self.minLaneHeight, h))
    }

    func timelineSVG(drawn: [(requests: [TimelineRequest], failures: [TimelineFailure])]) -> String {
        let layouts = model.lanes.map(layout)
        let lanesHeight = layouts.reduce(0) { $0 + $1.height }
        let showBottomAxis = model.lanes.count > 2
        let total = Self.axisHeight + lanesHeight + (showBottomAxis ? Self.bottomAxisHeight : 6)
        let ticks = chooseTicks()
        var s = "<div id=\"timeline\">\n"
        s += "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(Self.width))\" height=\"\(Int(total.rounded(.up)))\" "
        s += "viewBox=\"0 0 \(Int(Self.width)) \(Int(total.rounded(.up)))\" role=\"img\" aria-label=\"sessions per device over time\">\n"

        // Lane backgrounds first, grid above them, marks on top.
        var y = Self.axisHeight
        for (i, lay) in layouts.enumerated() {
            s += "<rect class=\"lane-bg\(i % 2 == 1 ? " alt" : "")\" x=\"0\" y=\"\(f1(y))\" width=\"\(Int(Self.width))\" height=\"\(f1(lay.height))\"/>\n"
            y += lay.height
        }
        let gridBottom = Self.axisHeight + lanesHeight
        s += "<g class=\"axis\" id=\"axis\" data-step-ns=\"\(ticks.step)\">\n"
        s += "<text class=\"axis-caption\" x=\"12\" y=\"\(f1(Self.axisHeight - 10))\">time (UTC)</text>\n"
        s += "<line class=\"axis-line\" x1=\"\(f1(Self.plotX0))\" y1=\"\(f1(Self.axisHeight))\" x2=\"\(f1(Self.plotX1))\" y2=\"\(f1(Self.axisHeight))\"/>\n"
        var lastDay: Int64? = nil
        for t in ticks.times {
            let tx = x(t)
            s += "<g class=\"tick\" data-time=\"\(t)\">"
            s += "<line class=\"grid\" x1=\"\(f1(tx))\" y1=\"\(f1(Self.axisHeight - 4))\" x2=\"\(f1(tx))\" y2=\"\(f1(gridBottom))\"/>"
            s += "<text class=\"tick-label\" x=\"\(f1(tx))\" y=\"\(f1(Self.axisHeight - 8))\">\(tickLabel(t, step: ticks.step))</text>"
            let day = floorDiv(t, 86_400_000_000_000)
            if day != lastDay {
                s += "<text class=\"tick-date\" x=\"\(f1(tx))\" y=\"\(f1(Self.axisHeight - 24))\">\(isoDate(t))</text>"
                lastDay = day
            }
            s += "</g>\n"
            if showBottomAxis {
                s += "<text class=\"tick-label\" x=\"\(f1(tx))\" y=\"\(f1(gridBottom + 16))\">\(tickLabel(t, step: ticks.step))</text>\n"
            }
        }
        // Where the log ends, when open sessions run to it.
        s += "<line class=\"log-edge\" x1=\"\(f1(x(model.start)))\" y1=\"\(f1(Self.axisHeight))\" x2=\"\(f1(x(model.start)))\" y2=\"\(f1(gridBottom))\"><title>log starts \(iso(model.start))</title></line>\n"
        s += "<line class=\"log-edge\" x1=\"\(f1(x(max(model.start, model.end))))\" y1=\"\(f1(Self.axisHeight))\" x2=\"\(f1(x(max(model.start, model.end))))\" y2=\"\(f1(gridBottom))\"><title>log ends \(iso(max(model.start, model.end)))</title></line>\n"
        s += "</g>\n"

        y = Self.axisHeight
        for (i, lane) in model.lanes.enumerated() {
            s += laneSVG(lane, layout: layouts[i], top: y, requests: drawn[i].requests, failures: drawn[i].failures)
            y += layouts[i].height
        }
        s += "</svg>\n</div>\n"
        return s
    }

    func laneSVG(_ lane: TimelineLane, layout lay: LaneLayout, top: Double,
                 requests: [TimelineRequest], failures: [TimelineFailure]) -> String {
        let name = displayName(lane)
        var s = "<g class=\"lane\" data-device=\"\(esc(lane.deviceID))\" data-name=\"\(esc(name))\">\n"
        // Label column.
        let failedRequests = lane.requests.lazy.filter(\.failed).count
        s += "<g class=\"lane-label\"><title>\(esc(name)) — \(esc(lane.deviceID))</title>"
        s += "<text class=\"device-name\" x=\"12\" y=\"\(f1(top + 24))\">\(esc(truncate(name, 22)))</text>"
        s += "<text class=\"device-id\" x=\"12\" y=\"\(f1(top + 40))\">\(esc(truncate(lane.deviceID, 30)))</text>"
        s += "<text class=\"device-stats\" x=\"12\" y=\"\(f1(top + 58))\">\(grouped(lane.sessions.count)) session\(lane.sessions.count == 1 ? "" : "s") · \(grouped(lane.requests.count)) request\(lane.requests.count == 1 ? "" : "s")</text>"
        if !lane.failures.isEmpty || failedRequests > 0 {
            var parts: [String] = []
            if !lane.failures.isEmpty { parts.append("\(grouped(lane.failures.count)) failure\(lane.failures.count == 1 ? "" : "s")") }
            if failedRequests > 0 { parts.append("\(grouped(failedRequests)) failed request\(failedRequests == 1 ? "" : "s")") }
            s += "<text class=\"device-stats bad\" x=\"12\" y=\"\(f1(top + 74))\">\(parts.joined(separator: " · "))</text>"
        }
        s += "</g>\n"
        s += "<line class=\"lane-sep\" x1=\"0\" y1=\"\(f1(top + lay.height))\" x2=\"\(Int(Self.width))\" y2=\"\(f1(top + lay.height))\"/>\n"

        let sessionsTop = top + Self.lanePadTop
        let requestY = sessionsTop + Double(lay.rows) * Self.sessionRowHeight
        let failureY = requestY + Self.requestRowHeight

        // Failure guides first (under the bars), so a failure lines up with what it hit.
        for f in failures {
            let fx = x(f.time)
            s += "<line class=\"failure-guide\" x1=\"\(f1(fx))\" y1=\"\(f1(sessionsTop))\" x2=\"\(f1(fx))\" y2=\"\(f1(failureY + Self.failureRowHeight / 2))\"/>\n"
        }
        if lane.sessions.isEmpty {
            s += "<text class=\"no-sessions\" x=\"\(f1(Self.plotX0 + 6))\" y=\"\(f1(sessionsTop + Self.barOffset + 13))\">no sessions</text>\n"
        }
        for (i, session) in lay.sorted.enumerated() {
            s += sessionSVG(session, top: sessionsTop + Double(lay.rowOf[i]) * Self.sessionRowHeight)
        }

        // Requests.
        // Hundreds of marks merge into a band: draw the plain ones lighter so failed ones stand out.
        s += "<g class=\"requests\(requests.count > 300 ? " dense" : "")\">\n"
        s += "<line class=\"row-base\" x1=\"\(f1(Self.plotX0))\" y1=\"\(f1(requestY + 15))\" x2=\"\(f1(Self.plotX1))\" y2=\"\(f1(requestY + 15))\"/>\n"
        for r in requests.sorted(by: { !$0.failed && $1.failed }) {  // failed ones on top
            let rx = x(r.time)
            let (y0, h, w) = r.failed ? (requestY + 1, 14.0, 3.0) : (requestY + 5, 10.0, 2.0)
            var tip = "\(r.type) at \(clock(r.time))"
            if let l = r.latencyMs { tip += " · \(formatLatency(l))" } else { tip += " · no answer recorded" }
            if r.failed { tip += " · FAILED" + (r.error.map { ": \($0)" } ?? "") }
            s += "<rect class=\"request\(r.failed ? " failed" : "")\" data-type=\"\(esc(r.type))\" x=\"\(f1(rx - w / 2))\" y=\"\(f1(y0))\" width=\"\(f1(w))\" height=\"\(f1(h))\"><title>\(esc(tip))</title></rect>\n"
        }
        s += "</g>\n"

        // Failures.
        s += "<g class=\"failures\">\n"
        let cy = failureY + Self.failureRowHeight / 2
        for f in failures {
            let fx = x(f.time)
            s += "<path class=\"failure\" data-kind=\"\(esc(f.kind))\" d=\"M\(f1(fx)),\(f1(cy - 7)) L\(f1(fx + 7)),\(f1(cy)) L\(f1(fx)),\(f1(cy + 7)) L\(f1(fx - 7)),\(f1(cy)) Z\"><title>\(esc("\(f.kind) at \(clock(f.time)): \(f.message)"))</title></path>\n"
        }
        s += "</g>\n</g>\n"
        return s
    }

    func sessionSVG(_ session: TimelineSession, top: Double) -> String {
        let barY = top + Self.barOffset
        let x0 = x(session.start)
        let endTime = session.end ?? max(model.end, model.start)
        let x1 = max(x0 + 2, session.end == nil ? Self.plotX1 : x(endTime))
        let segments = segmentsOf(session, endTime: endTime)
        let finalState = session.states.last?.to ?? segments.last?.state ?? "connected"
        let label = endLabel(session)
        var s = "<g class=\"session\(session.end == nil ? " open" : "")\" data-session=\"\(esc(session.id))\" data-state=\"\(esc(finalState))\""
        if let app = session.appID { s += " data-app=\"\(esc(app))\"" }
        s += " data-end-reason=\"\(esc(label.key))\">\n"

        var tip = "session \(session.id)"
        if let app = session.appID { tip += " · app \(app)" }
        tip += "\n\(clock(session.start)) → " + (session.end.map(clock) ?? "open at end of log")
        tip += " (\(formatDuration(endTime - session.start)))"
        tip += "\nend: \(label.text)"
        s += "<rect class=\"session-bar\" x=\"\(f1(x0))\" y=\"\(f1(barY))\" width=\"\(f1(x1 - x0))\" height=\"\(f1(Self.barHeight))\"><title>\(esc(tip))</title></rect>\n"
        for seg in segments {
            let sx0 = x(seg.from)
            var sx1 = seg.isLast ? x1 : x(seg.to)
            if sx1 < sx0 { sx1 = sx0 }
            guard sx1 - sx0 > 0.05 || seg.isLast && segments.count == 1 else { continue }
            let w = max(sx1 - sx0, segments.count == 1 ? 2 : 0)
            let segTip = "\(seg.state) · \(clock(seg.from)) → \(seg.isLast && session.end == nil ? "open" : clock(seg.to)) (\(formatDuration(seg.to - seg.from)))"
            s += "<rect class=\"segment state-\(cssName(seg.state))\" data-state=\"\(esc(seg.state))\" x=\"\(f1(sx0))\" y=\"\(f1(barY))\" width=\"\(f1(w))\" height=\"\(f1(Self.barHeight))\"><title>\(esc(segTip))</title></rect>\n"
        }
        if session.end == nil {
            // An open session fades into an arrow at the end of the log.
            s += "<path class=\"open-arrow\" d=\"M\(f1(x1)),\(f1(barY - 2)) L\(f1(x1 + 8)),\(f1(barY + Self.barHeight / 2)) L\(f1(x1)),\(f1(barY + Self.barHeight + 2)) Z\"/>\n"
        }
        s += "<rect class=\"session-outline\" x=\"\(f1(x0))\" y=\"\(f1(barY))\" width=\"\(f1(x1 - x0))\" height=\"\(f1(Self.barHeight))\"/>\n"
        // State-change markers.
        for c in session.states {
            let cx = x(c.time)
            var ct = "\(clock(c.time)) \(c.from) → \(c.to)"
            if let r = c.reason, !r.isEmpty { ct += " — \(r)" }
            s += "<g class=\"state-change\" data-from=\"\(esc(c.from))\" data-to=\"\(esc(c.to))\"><title>\(esc(ct))</title>"
            s += "<line x1=\"\(f1(cx))\" y1=\"\(f1(barY))\" x2=\"\(f1(cx))\" y2=\"\(f1(barY + Self.barHeight))\"/>"
            s += "<path class=\"marker\" d=\"M\(f1(cx - 4)),\(f1(barY - 7)) L\(f1(cx + 4)),\(f1(barY - 7)) L\(f1(cx)),\(f1(barY - 1)) Z\"/></g>\n"
        }
        // Session name inside the bar when it fits (above the markers).
        let name = session.appID ?? String(session.id.prefix(12))
        let nameWidth = textWidth(name, size: 11)
        if x1 - x0 >= nameWidth + 12 {
            s += "<text class=\"session-name\" x=\"\(f1(x0 + 5))\" y=\"\(f1(barY + 13))\">\(esc(name))</text>\n"
        }
        let lx = x1 + (session.end == nil ? 12 : 6)
        s += "<text class=\"end-reason \(label.cls)\" data-reason=\"\(esc(label.key))\" x=\"\(f1(lx))\" y=\"\(f1(barY + 13))\">\(esc(label.text))<title>\(esc(label.long))</title></text>\n"
        s += "</g>\n"
        return s
    }

    struct Segment { var state: String; var from: Int64; var to: Int64; var isLast: Bool }

    func segmentsOf(_ session: TimelineSession, endTime: Int64) -> [Segment] {
        let changes = session.states.sorted { $0.time < $1.time }
        var state = changes.first?.from ?? "connected"
        var from = session.start
        var out: [Segment] = []
        for c in changes {
            let t = min(max(c.time, session.start), max(endTime, session.start))
            if t > from || out.isEmpty && t > from { out.append(Segment(state: state, from: from, to: t, isLast: false)) }
            state = c.to
            from = max(from, t)
        }
        out.append(Segment(state: state, from: from, to: max(from, endTime), isLast: true))
        return out
    }

    /// The words written at the end of a session bar.
    func endLabel(_ s: TimelineSession) -> (key: String, text: String, long: String, cls: String) {
        guard s.end != nil else {
            return ("open", "open", "still open at the end of the log", "open")
        }
        guard let reason = s.endReason, !reason.isEmpty else {
            return ("request", "ended", "ended on request (stopped or left by the sender)", "by-request")
        }
        switch reason {
        case "appStopped": return (reason, "app stopped", "appStopped: the receiver app was stopped", "app-stopped")
        case "sessionGone": return (reason, "session gone", "sessionGone: the device lost the session (reboot, app crash, network)", "gone")
        default: return (reason, truncate(reason, 24), reason, "other")
        }
    }

    // MARK: Tables

    func details() -> String {
        var d = "<main id=\"details\">\n"
        for lane in model.lanes {
            let name = displayName(lane)
            d += "<section class=\"device-detail\" data-device=\"\(esc(lane.deviceID))\">\n"
            d += "<h2>\(esc(name)) <small>\(esc(lane.deviceID))</small></h2>\n"
            if lane.sessions.isEmpty {
                d += "<p class=\"muted\">No sessions.</p>\n"
            } else {
                d += "<table class=\"sessions\">\n<caption>Sessions</caption>\n<thead><tr><th>#</th><th>session</th><th>app</th><th>start (UTC)</th><th>end (UTC)</th><th>duration</th><th>end reason</th><th>states</th></tr></thead>\n<tbody>\n"
                let sorted = lane.sessions.sorted { $0.start < $1.start }
                for (i, s) in sorted.enumerated() {
                    let endTime = s.end ?? max(model.end, model.start)
                    let label = endLabel(s)
                    d += "<tr class=\"session-row\" data-session=\"\(esc(s.id))\"><td>\(i + 1)</td><td class=\"mono\">\(esc(s.id))</td>"
                    d += "<td class=\"mono\">\(esc(s.appID ?? "—"))</td><td class=\"mono\">\(iso(s.start))</td>"
                    d += "<td class=\"mono\">\(s.end.map(iso) ?? "<span class=\"open\">open</span>")</td>"
                    d += "<td class=\"num\">\(esc(formatDuration(endTime - s.start)))\(s.end == nil ? "+" : "")</td>"
                    d += "<td class=\"reason \(label.cls)\">\(esc(label.text))</td><td class=\"states\">\(esc(stateSequence(s)))</td></tr>\n"
                }
                d += "</tbody>\n</table>\n"
            }
            if !lane.requests.isEmpty {
                d += requestTable(lane.requests)
            }
            if !lane.failures.isEmpty {
                d += "<table class=\"failures\">\n<caption>Failures</caption>\n<thead><tr><th>time (UTC)</th><th>kind</th><th>message</th></tr></thead>\n<tbody>\n"
                for f in lane.failures.sorted(by: { $0.time < $1.time }) {
                    d += "<tr class=\"failure-row\"><td class=\"mono\">\(iso(f.time))</td><td class=\"mono\">\(esc(f.kind))</td><td>\(esc(f.message))</td></tr>\n"
                }
                d += "</tbody>\n</table>\n"
            }
            d += "</section>\n"
        }
        d += "</main>\n"
        return d
    }

    func requestTable(_ requests: [TimelineRequest]) -> String {
        var byType: [String: [TimelineRequest]] = [:]
        var order: [String] = []
        for r in requests {
            if byType[r.type] == nil { order.append(r.type) }
            byType[r.type, default: []].append(r)
        }
        order.sort { (byType[$0]!.count, $1) > (byType[$1]!.count, $0) }
        var t = "<table class=\"requests\">\n<caption>Requests by type</caption>\n<thead><tr><th>request</th><th>count</th><th>failed</th><th>median latency</th><th>max latency</th><th>first error</th></tr></thead>\n<tbody>\n"
        for type in order {
            let rs = byType[type]!
            let lat = rs.compactMap(\.latencyMs).filter(\.isFinite).sorted()
            let failed = rs.filter(\.failed)
            let median = lat.isEmpty ? "—" : formatLatency(lat[lat.count / 2])
            let maxL = lat.last.map(formatLatency) ?? "—"
            let firstError = failed.first.flatMap(\.error) ?? ""
            t += "<tr class=\"request-row\(failed.isEmpty ? "" : " has-failed")\" data-type=\"\(esc(type))\"><td class=\"mono\">\(esc(type))</td><td class=\"num\">\(grouped(rs.count))</td>"
            t += "<td class=\"num\(failed.isEmpty ? "" : " bad")\">\(grouped(failed.count))</td><td class=\"num\">\(median)</td><td class=\"num\">\(maxL)</td><td>\(esc(firstError))</td></tr>\n"
        }
        t += "</tbody>\n</table>\n"
        return t
    }

    func stateSequence(_ s: TimelineSession) -> String {
        let changes = s.states.sorted { $0.time < $1.time }
        guard let first = changes.first else { return "—" }
        var names = [first.from] + changes.map(\.to)
        if names.count > 12 {
            let n = names.count
            names = Array(names.prefix(5)) + ["… \(n - 9) more …"] + Array(names.suffix(4))
        }
        return names.joined(separator: " → ")
    }

    // MARK: Sampling

    func sampleRequests(_ rs: [TimelineRequest]) -> [TimelineRequest] {
        let cap = TimelineHTML.maxRequestMarksPerLane
        guard rs.count > cap else { return rs }
        let failed = rs.filter(\.failed)
        if failed.count >= cap { return evenly(failed, cap) }
        return failed + evenly(rs.filter { !$0.failed }, cap - failed.count)
    }

    func sampleFailures(_ fs: [TimelineFailure]) -> [TimelineFailure] {
        evenly(fs, TimelineHTML.maxFailureMarksPerLane)
    }

    func evenly<T>(_ xs: [T], _ n: Int) -> [T] {
        guard xs.count > n else { return xs }
        guard n > 0 else { return [] }
        return (0..<n).map { xs[$0 * xs.count / n] }
    }

    // MARK: Axis

    func chooseTicks() -> (step: Int64, times: [Int64]) {
        let ms: Int64 = 1_000_000, sec: Int64 = 1_000_000_000, min: Int64 = 60 * sec, hour: Int64 = 60 * min, day: Int64 = 24 * hour
        var steps: [Int64] = [1, 2, 5, 10, 20, 50, 100, 200, 250, 500].map { $0 * ms }
        steps += [1, 2, 5, 10, 15, 20, 30].map { $0 * sec }
        steps += [1, 2, 5, 10, 15, 20, 30].map { $0 * min }
        steps += [1, 2, 3, 4, 6, 12].map { $0 * hour }
        steps += [1, 2, 5, 7, 14, 30, 60, 90, 180, 365, 730, 1825, 3650].map { $0 * day }
        var sub: Int64 = 1_000  // below a millisecond (only when the window is tiny)
        var small: [Int64] = []
        while sub < ms { small += [sub, 2 * sub, 5 * sub]; sub *= 10 }
        steps = small + steps
        func count(_ step: Int64) -> Int64 {
            let first = floorDiv(viewStart, step) + (floorMod(viewStart, step) == 0 ? 0 : 1)
            let last = floorDiv(viewEnd, step)
            return last - first + 1
        }
        var best = steps.last!
        var bestScore = Int64.max
        for step in steps {
            let n = count(step)
            let score = (5...10).contains(n) ? abs(n - 7) : 100 + (n < 5 ? (5 - n) * 10 : n - 10)
            if score < bestScore { best = step; bestScore = score }
        }
        let first = (floorDiv(viewStart, best) + (floorMod(viewStart, best) == 0 ? 0 : 1)) * best
        var times: [Int64] = []
        var t = first
        while t <= viewEnd && times.count < 200 {
            times.append(t)
            let (next, o) = t.addingReportingOverflow(best)
            if o { break }
            t = next
        }
        return (best, times)
    }

    func tickLabel(_ t: Int64, step: Int64) -> String {
        let c = clockParts(t)
        if step < 1_000_000 { return "\(pad(c.h, 2)):\(pad(c.m, 2)):\(pad(c.s, 2)).\(pad(c.ns / 1_000, 6))" }
        if step < 1_000_000_000 { return "\(pad(c.h, 2)):\(pad(c.m, 2)):\(pad(c.s, 2)).\(pad(c.ns / 1_000_000, 3))" }
        if step < 60_000_000_000 { return "\(pad(c.h, 2)):\(pad(c.m, 2)):\(pad(c.s, 2))" }
        if step < 86_400_000_000_000 { return "\(pad(c.h, 2)):\(pad(c.m, 2))" }
        return isoDate(t)
    }

    // MARK: Small helpers

    func displayName(_ lane: TimelineLane) -> String {
        lane.deviceName.isEmpty ? (lane.deviceID.isEmpty ? "unknown device" : lane.deviceID) : lane.deviceName
    }

    /// Rough width of sans-serif text (no font metrics without a browser).
    func textWidth(_ s: String, size: Double) -> Double {
        Double(s.count) * size * 0.58
    }

    func truncate(_ s: String, _ n: Int) -> String {
        s.count <= n ? s : String(s.prefix(n - 1)) + "…"
    }

    func cssName(_ state: String) -> String {
        let mapped = state.lowercased().unicodeScalars.map { c -> Character in
            ("a"..."z").contains(c) || ("0"..."9").contains(c) || c == "-" ? Character(c) : "-"
        }
        return mapped.isEmpty ? "unknown" : String(mapped)
    }

    static let css = """
    :root { color-scheme: light; }
    body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1f2328; margin: 20px 24px; background: #fff; }
    h1 { font-size: 22px; margin: 0 0 4px; }
    h2 { font-size: 17px; margin: 22px 0 8px; }
    h2 small { font-weight: normal; color: #6a737d; font-size: 12px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
    .range { margin: 0 0 8px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
    .duration { color: #57606a; }
    #summary { list-style: none; padding: 0; margin: 0 0 8px; display: flex; flex-wrap: wrap; gap: 8px; }
    #summary li { background: #f3f4f6; border: 1px solid #d8dee4; border-radius: 6px; padding: 3px 10px; }
    #summary li.bad { background: #fdecec; border-color: #f2b8b8; }
    #notes { margin: 4px 0 8px; padding-left: 20px; color: #7a4b00; font-size: 13px; }
    .muted { color: #6a737d; }
    .bad { color: #b42318; }
    #legend { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; margin: 10px 0 12px; font-size: 13px; }
    #legend .key { display: inline-flex; align-items: center; gap: 5px; }
    #legend .hint { color: #6a737d; }
    #legend svg { overflow: visible; }
    #timeline { overflow-x: auto; border: 1px solid #d8dee4; border-radius: 6px; width: fit-content; max-width: 100%; }
    #timeline.empty { padding: 24px; }
    .empty-message { font-size: 16px; color: #57606a; }
    svg.chart { display: block; font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
    .lane-bg { fill: #ffffff; }
    .lane-bg.alt { fill: #f6f8fa; }
    .lane-sep { stroke: #d0d7de; stroke-width: 1; }
    .axis-line { stroke: #8c959f; stroke-width: 1; }
    .grid { stroke: #e1e4e8; stroke-width: 1; }
    .tick-label { font-size: 11px; fill: #57606a; text-anchor: middle; font-variant-numeric: tabular-nums; }
    .tick-date { font-size: 11px; fill: #1f2328; font-weight: 600; text-anchor: middle; }
    .axis-caption { font-size: 11px; fill: #6a737d; }
    .log-edge { stroke: #8c959f; stroke-width: 1; stroke-dasharray: 3 3; }
    .device-name { font-size: 14px; font-weight: 600; fill: #1f2328; }
    .device-id { font-size: 10.5px; fill: #6a737d; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
    .device-stats { font-size: 11px; fill: #57606a; }
    .device-stats.bad { fill: #b42318; }
    .no-sessions { font-size: 12px; fill: #8c959f; font-style: italic; }
    .session-bar { fill: #eef1f4; }
    .session-outline { fill: none; stroke: #424a53; stroke-width: 1; pointer-events: none; }
    .session.open .session-outline { stroke-dasharray: 4 2; }
    .open-arrow { fill: #2f6fdf; }
    .session-name { font-size: 11px; font-weight: 600; fill: #101418; paint-order: stroke; stroke: rgba(255,255,255,.85); stroke-width: 3px; pointer-events: none; }
    .segment { fill: #8c959f; }
    .segment.state-connecting { fill: #3b82f6; }
    .segment.state-connected { fill: #2da44e; }
    .segment.state-suspended { fill: #e3a008; }
    .segment.state-resuming { fill: #f5c84c; }
    .segment.state-ending { fill: #a8b1bb; }
    .segment.state-ended { fill: #c9d1d9; }
    .segment.state-failed { fill: #d1242f; }
    .state-change line { stroke: #ffffff; stroke-width: 1.5; }
    .marker { fill: #24292f; }
    .end-reason { font-size: 11.5px; fill: #424a53; }
    .end-reason.gone { fill: #b42318; font-weight: 600; }
    .end-reason.app-stopped { fill: #57606a; }
    .end-reason.open { fill: #2f6fdf; font-weight: 600; font-style: italic; }
    .row-base { stroke: #d0d7de; stroke-width: 1; }
    rect.request { fill: #57606a; }
    rect.request.failed { fill: #d1242f; }
    .requests.dense rect.request:not(.failed) { fill: #aab3bd; }
    .failure { fill: #d1242f; stroke: #6e0b10; stroke-width: 1; }
    .failure-guide { stroke: #d1242f; stroke-width: 1; stroke-dasharray: 2 3; opacity: .55; }
    table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
    th, td { border: 1px solid #d8dee4; padding: 3px 8px; text-align: left; vertical-align: top; }
    th { background: #f3f4f6; font-weight: 600; }
    td.num { text-align: right; font-variant-numeric: tabular-nums; }
    td.mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; white-space: nowrap; }
    td.num { white-space: nowrap; }
    td.states { color: #57606a; font-size: 12px; }
    td.reason { white-space: nowrap; }
    caption { text-align: left; font-weight: 600; font-size: 13px; color: #57606a; padding: 0 0 3px; }
    td.reason.gone { color: #b42318; font-weight: 600; }
    .open { color: #2f6fdf; font-weight: 600; }
    table.failures td { color: #1f2328; }
    table.failures { border-left: 3px solid #d1242f; }
    #tip { position: absolute; display: none; max-width: 460px; white-space: pre-line; background: #1f2328; color: #fff; font-size: 12px; padding: 5px 8px; border-radius: 4px; pointer-events: none; z-index: 10; }

    """

    /// Hover tooltips without the browser's delay. The `<title>` elements stay in the DOM (readable
    /// without JS and by tests); while one is shown here its text is lifted so the browser shows no second one.
    static let script = """
    (function () {
      var tip = document.getElementById('tip'), held = null, text = '';
      function titleOf(el) {
        for (; el && el !== document; el = el.parentNode) {
          var c = el.firstElementChild;
          while (c && c.tagName.toLowerCase() !== 'title') { c = c.nextElementSibling; }
          if (c) { return c; }
          if (el.id === 'timeline') { return null; }
        }
        return null;
      }
      function release() { if (held) { held.textContent = text; held = null; } tip.style.display = 'none'; }
      document.addEventListener('mouseover', function (e) {
        var t = titleOf(e.target);
        if (t === held) { return; }
        release();
        if (!t || !t.textContent) { return; }
        held = t; text = t.textContent; t.textContent = '';
        tip.textContent = text; tip.style.display = 'block';
      });
      document.addEventListener('mousemove', function (e) {
        if (held) { tip.style.left = (e.pageX + 14) + 'px'; tip.style.top = (e.pageY + 14) + 'px'; }
      });
      document.addEventListener('mouseleave', release);
    })();

    """
}

// MARK: - Text and time formatting (no Foundation)

// Members rather than free functions, so nothing here can clash with other files of the module.
extension TimelinePage {
    /// HTML text and attribute escaping: & < > " '.
    func esc(_ s: String) -> String {
        var needs = false
        for u in s.utf8 where u == 0x26 || u == 0x3C || u == 0x3E || u == 0x22 || u == 0x27 { needs = true; break }
        guard needs else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
        a - floorDiv(a, b) * b
    }

    func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    func clockParts(_ ns: Int64) -> (day: Int64, h: Int64, m: Int64, s: Int64, ns: Int64) {
        let dayNs: Int64 = 86_400_000_000_000
        let day = floorDiv(ns, dayNs)
        let rest = floorMod(ns, dayNs)
        let secs = rest / 1_000_000_000
        return (day, secs / 3600, secs / 60 % 60, secs % 60, rest % 1_000_000_000)
    }

    func isoDate(_ ns: Int64) -> String {
        let c = LogTime.civil(fromDays: clockParts(ns).day)
        return "\(pad(c.0, 4))-\(pad(c.1, 2))-\(pad(c.2, 2))"
    }

    /// 2024-05-14T18:30:00.123Z
    func iso(_ ns: Int64) -> String { LogTime.rfc3339(ns, fractionDigits: 3) }

    /// 18:30:00.123 (tooltips; the date is on the axis).
    func clock(_ ns: Int64) -> String {
        let p = clockParts(ns)
        return "\(pad(p.h, 2)):\(pad(p.m, 2)):\(pad(p.s, 2)).\(pad(p.ns / 1_000_000, 3))"
    }

    func fixed(_ v: Double, _ digits: Int) -> String {
        guard v.isFinite else { return v.isNaN ? "NaN" : (v < 0 ? "-∞" : "∞") }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let r = (Swift.abs(v) * scale).rounded()
        guard r < 9e15 else { return String(v) }
        let n = Int64(r)
        let ip = n / Int64(scale)
        let sign = v < 0 && n != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(ip) }
        return sign + String(ip) + "." + pad(n % Int64(scale), digits)
    }

    /// SVG coordinates: one decimal.
    func f1(_ v: Double) -> String { fixed(v, 1) }

    /// 1,234,567
    func grouped(_ n: Int) -> String {
        let s = String(Swift.abs(n))
        var out = ""
        for (i, c) in s.enumerated() {
            if i > 0 && (s.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    func formatLatency(_ ms: Double) -> String {
        guard ms.isFinite else { return "—" }
        if ms < 10 { return fixed(ms, 1) + " ms" }
        if ms < 1_000 { return fixed(ms, 0) + " ms" }
        return fixed(ms / 1_000, 2) + " s"
    }

    /// 850 ms · 12.3 s · 4m 05s · 2h 03m 05s · 3d 04h 10m
    func formatDuration(_ ns: Int64) -> String {
        if ns < 0 { return "-" + formatDuration(ns == Int64.min ? Int64.max : -ns) }
        if ns == 0 { return "0 ms" }
        if ns < 1_000_000 { return "<1 ms" }
        if ns < 1_000_000_000 { return "\(ns / 1_000_000) ms" }
        if ns < 60_000_000_000 { return fixed(Double(ns) / 1e9, ns < 10_000_000_000 ? 2 : 1) + " s" }
        let totalSeconds = ns / 1_000_000_000
        let s = totalSeconds % 60, m = totalSeconds / 60 % 60, h = totalSeconds / 3600 % 24, d = totalSeconds / 86_400
        if d > 0 { return "\(d)d \(pad(h, 2))h \(pad(m, 2))m" }
        if h > 0 { return "\(h)h \(pad(m, 2))m \(pad(s, 2))s" }
        return "\(m)m \(pad(s, 2))s"
    }
}
