extension TimelinePage {
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
            if !lane.story.isEmpty {
                d += "<table class=\"story\">\n<caption>What happened (app stops, takeovers, owners, announcements, pages, plugins)</caption>\n<thead><tr><th>time (UTC)</th><th>kind</th><th>what and why</th></tr></thead>\n<tbody>\n"
                for e in lane.story.sorted(by: { $0.time < $1.time }) {
                    d += "<tr class=\"story-row \(e.kind.rawValue)\"><td class=\"mono\">\(iso(e.time))</td><td class=\"mono\">\(e.kind.rawValue)</td><td>\(esc(e.text))</td></tr>\n"
                }
                d += "</tbody>\n</table>\n"
            }
            if !lane.content.isEmpty {
                d += "<table class=\"content\">\n<caption>On the screen</caption>\n<thead><tr><th>from (UTC)</th><th>duration</th><th>what</th><th>content</th></tr></thead>\n<tbody>\n"
                for c in lane.content {
                    let what = c.isAnnouncement ? "announcement" : c.kind == .shown ? "shown" : "\(c.kind == .notShown ? "not shown" : "not observed"): \(c.cause ?? "?")"
                    d += "<tr class=\"content-row \(c.isAnnouncement ? "announcement" : c.kind.rawValue)\"><td class=\"mono\">\(iso(c.from))</td><td class=\"num\">\(esc(formatDuration(c.to - c.from)))</td><td>\(esc(what))</td><td class=\"mono\">\(esc(c.content ?? ""))</td></tr>\n"
                }
                d += "</tbody>\n</table>\n"
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
        let name = lane.deviceName.isEmpty ? (lane.deviceID.isEmpty ? "unknown device" : lane.deviceID) : lane.deviceName
        // A central journal holds many sites: the lane says whose TV it is.
        return lane.site.map { "\($0) · \(name)" } ?? name
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
}
