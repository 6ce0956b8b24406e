extension TimelinePage {
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
        let h = Self.lanePadTop + Self.contentRowHeight + Double(rows) * Self.sessionRowHeight + Self.requestRowHeight
            + Self.failureRowHeight + Self.storyRowHeight + Self.lanePadBottom
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
        let failedRequests = lane.requests.isEmpty ? lane.summaryFailedRequests : lane.requests.lazy.filter(\.failed).count
        s += "<g class=\"lane-label\"><title>\(esc(name)) — \(esc(lane.deviceID))</title>"
        s += "<text class=\"device-name\" x=\"12\" y=\"\(f1(top + 24))\">\(esc(truncate(name, 22)))</text>"
        s += "<text class=\"device-id\" x=\"12\" y=\"\(f1(top + 40))\">\(esc(truncate(lane.deviceID, 30)))</text>"
        // Requests: the traffic records' marks when logged (debug), else the sessions' summaries (info).
        let requestCount = lane.requests.isEmpty ? lane.summaryRequests : lane.requests.count
        s += "<text class=\"device-stats\" x=\"12\" y=\"\(f1(top + 58))\">\(grouped(lane.sessions.count)) session\(lane.sessions.count == 1 ? "" : "s") · \(grouped(requestCount)) request\(requestCount == 1 ? "" : "s")</text>"
        if !lane.failures.isEmpty || failedRequests > 0 {
            var parts: [String] = []
            if !lane.failures.isEmpty { parts.append("\(grouped(lane.failures.count)) failure\(lane.failures.count == 1 ? "" : "s")") }
            if failedRequests > 0 { parts.append("\(grouped(failedRequests)) failed request\(failedRequests == 1 ? "" : "s")") }
            s += "<text class=\"device-stats bad\" x=\"12\" y=\"\(f1(top + 74))\">\(parts.joined(separator: " · "))</text>"
        }
        s += "</g>\n"
        s += "<line class=\"lane-sep\" x1=\"0\" y1=\"\(f1(top + lay.height))\" x2=\"\(Int(Self.width))\" y2=\"\(f1(top + lay.height))\"/>\n"

        let contentY = top + Self.lanePadTop
        let sessionsTop = contentY + Self.contentRowHeight
        let requestY = sessionsTop + Double(lay.rows) * Self.sessionRowHeight
        let failureY = requestY + Self.requestRowHeight
        let storyY = failureY + Self.failureRowHeight

        // What the screen showed.
        s += "<g class=\"content\">\n"
        for c in lane.content {
            let cx0 = x(c.from), cx1 = max(cx0 + 1, x(c.to))
            let cls = c.isAnnouncement ? "announcement" : c.kind.rawValue
            let what = c.kind == .shown ? (c.isAnnouncement ? "announcement" : "shown") : c.kind == .notShown ? "not shown" : "not observed"
            let tip = "\(what) \(clock(c.from)) → \(clock(c.to)) (\(formatDuration(c.to - c.from)))" + (c.content.map { "\n\($0)" } ?? "")
                + (c.cause.map { c.isAnnouncement ? "" : "\n\($0)" } ?? "")
            s += "<rect class=\"content-segment \(cls)\" data-content=\"\(esc(c.content ?? ""))\" x=\"\(f1(cx0))\" y=\"\(f1(contentY))\" width=\"\(f1(cx1 - cx0))\" height=\"\(f1(Self.contentRowHeight - 3))\"><title>\(esc(tip))</title></rect>\n"
        }
        s += "</g>\n"

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
        s += "</g>\n"

        // The story: what happened to the screen, and why.
        s += "<g class=\"story\">\n"
        let sy = storyY + Self.storyRowHeight / 2
        for e in lane.story.prefix(TimelineHTML.maxFailureMarksPerLane) {
            s += "<circle class=\"story-event \(e.kind.rawValue)\" data-kind=\"\(e.kind.rawValue)\" cx=\"\(f1(x(e.time)))\" cy=\"\(f1(sy))\" r=\"5\"><title>\(esc("\(e.kind.rawValue) at \(clock(e.time)): \(e.text)"))</title></circle>\n"
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
        if let process = session.process { s += " data-process=\"\(esc(process))\"" }
        s += " data-end-reason=\"\(esc(label.key))\">\n"

        var tip = "session \(session.id)"
        if let app = session.appID { tip += " · app \(app)" }
        if let process = session.process { tip += " · \(process)" }
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
}
