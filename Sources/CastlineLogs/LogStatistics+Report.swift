import CastCore

extension LogStatistics {
    /// How long each suspension that resumed lasted, in ms (`resumed` counts these; a
    /// suspension its session's end closed is not one).
    var resumedDurations: [Double] {
        suspensions.compactMap { s in s.resumed ? s.end.map { Double($0 - s.start) / 1e6 } : nil }
    }

    /// The `--json` report (keys documented in README).
    package func json(read: LogReadReport) -> JSONValue {
        var o = JSONObject()
        o.set("records", .int(Int64(records)))
        if let first, let last {
            o.set("from", .string(LogTime.rfc3339(first, fractionDigits: 3)))
            o.set("to", .string(LogTime.rfc3339(last, fractionDigits: 3)))
        }
        o.set("messages", .array(messages.keys.sorted().map { key in
            ["namespace": .string(key.namespace), "type": .string(key.type), "direction": .string(key.direction),
             "count": .int(Int64(messages[key]!))]
        }))
        var latency = JSONObject()
        for type in latencies.keys.sorted() {
            guard let p = Percentiles(latencies[type]!) else { continue }
            latency.set(type, ["count": .int(Int64(p.count)), "p50_ms": .double(Self.round(p.p50)), "p95_ms": .double(Self.round(p.p95)),
                               "p99_ms": .double(Self.round(p.p99)), "max_ms": .double(Self.round(p.max))])
        }
        o.set("latency", .object(latency))
        o.set("unanswered", .object(JSONObject(unansweredByType.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int(Int64($0.value))) })))
        o.set("errors", .object(JSONObject(errors.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int(Int64($0.value))) })))
        let durations = resumedDurations
        var suspends: JSONObject = ["count": .int(Int64(suspensions.count)), "resumed": .int(Int64(durations.count)),
                                    "reconnectAttempts": .int(Int64(reconnectAttempts))]
        if let p = Percentiles(durations) {
            suspends.set("p50_ms", .double(Self.round(p.p50)))
            suspends.set("max_ms", .double(Self.round(p.max)))
        }
        suspends.set("list", .array(suspensions.map { s in
            var item: JSONObject = ["device": .string(s.device), "start": .string(LogTime.rfc3339(s.start, fractionDigits: 3)),
                                    "reason": .string(s.reason)]
            if let end = s.end { item.set("duration_ms", .double(Self.round(Double(end - s.start) / 1e6))) }
            item.set("outcome", .string(s.resumed ? "resumed" : s.end == nil ? "open" : "ended"))
            return .object(item)
        }))
        o.set("suspends", .object(suspends))
        o.set("sessions", .array(sessions.map { s in
            var item: JSONObject = ["device": .string(s.device), "deviceName": .string(s.deviceName), "localSession": .string(s.localSession),
                                    "start": .string(LogTime.rfc3339(s.start, fractionDigits: 3)), "suspends": .int(Int64(s.suspends))]
            if let app = s.appSession { item.set("appSession", .string(app)) }
            if let end = s.end {
                item.set("end", .string(LogTime.rfc3339(end, fractionDigits: 3)))
                item.set("duration_ms", .double(Self.round(Double(end - s.start) / 1e6)))
            }
            item.set("endReason", s.endReason.map { .string($0) } ?? .null)
            item.set("appChanges", .array(s.appChanges.map { c in
                .object(["time": .string(LogTime.rfc3339(c.time, fractionDigits: 3)), "appId": .string(c.appID), "change": .string(c.change)])
            }))
            return .object(item)
        }))
        o.set("screens", .array(screenReport.map { s in
            ["device": .string(s.device), "deviceName": .string(s.deviceName), "url": .string(s.url),
             "shown_s": .double(Self.round(Double(s.shown) / 1e9)), "keepAlives": .int(Int64(s.keepAlives)),
             "gaps": .array(s.gaps.map { g in
                 var item: JSONObject = ["start": .string(LogTime.rfc3339(g.start, fractionDigits: 3)), "reason": .string(g.reason)]
                 item.set("duration_s", g.end.map { .double(Self.round(Double($0 - g.start) / 1e9)) } ?? .null)
                 return .object(item)
             })]
        }))
        let causes = causesJSON
        o.set("display", displayJSON)
        o.set("appStops", causes.stops)
        o.set("pluginFailures", causes.plugins)
        o.set("serversDown", serversDownJSON)
        o.set("dropped", .object(JSONObject(droppedBySink.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int($0.value)) })))
        o.set("read", read.json)
        return .object(o)
    }

    static func round(_ ms: Double) -> Double { (ms * 1000).rounded() / 1000 }

    /// The text report: sections with aligned columns.
    package func text(read: LogReadReport) -> String {
        var out: [String] = []
        func ms(_ v: Double) -> String { v < 10 ? String(Self.round(v)) : String(Int(v.rounded())) }
        out.append("records: \(records)" + (first.map { " from \(LogTime.rfc3339($0, fractionDigits: 3))" } ?? "")
                   + (last.map { " to \(LogTime.rfc3339($0, fractionDigits: 3))" } ?? ""))
        out.append("")
        out.append("messages (namespace, type, direction: count)")
        for key in messages.keys.sorted() { out.append("  \(key.namespace)  \(key.type)  \(key.direction): \(messages[key]!)") }
        if messages.isEmpty { out.append("  none (traffic records are at debug: CastChannel.*:debug)") }
        out.append("")
        out.append("request → response latency (ms): count p50 p95 p99 max")
        for type in latencies.keys.sorted() {
            guard let p = Percentiles(latencies[type]!) else { continue }
            out.append("  \(type): \(p.count)  \(ms(p.p50))  \(ms(p.p95))  \(ms(p.p99))  \(ms(p.max))")
        }
        for (type, count) in unansweredByType.sorted(by: { $0.key < $1.key }) { out.append("  \(type): \(count) without a reply") }
        out.append("")
        out.append("errors")
        for (kind, count) in errors.sorted(by: { $0.key < $1.key }) { out.append("  \(kind): \(count)") }
        if errors.isEmpty { out.append("  none") }
        out.append("")
        let durations = resumedDurations
        var line = "suspends: \(suspensions.count), resumed \(durations.count), reconnect attempts \(reconnectAttempts)"
        if let p = Percentiles(durations) { line += "; suspended p50 \(ms(p.p50)) ms, max \(ms(p.max)) ms" }
        out.append(line)
        out.append("")
        out.append("sessions: \(sessions.count)")
        for s in sessions {
            let length = s.end.map { "\(ms(Double($0 - s.start) / 1e6)) ms" } ?? "open"
            out.append("  \(s.deviceName) #\(s.localSession) \(LogTime.rfc3339(s.start, fractionDigits: 3)) \(length)"
                       + " end: \(s.endReason ?? "open")" + (s.suspends > 0 ? ", \(s.suspends) suspend(s)" : ""))
            for c in s.appChanges { out.append("    \(LogTime.rfc3339(c.time, fractionDigits: 3)) app \(c.appID) \(c.change)") }
        }
        let screens = screenReport
        if !screens.isEmpty {
            out.append("")
            out.append("screens (what jobs kept on them): \(screens.count)")
            for s in screens {
                let seconds = (Double(s.shown) / 1e9 * 10).rounded() / 10
                out.append("  \(s.deviceName): \(s.url) shown \(seconds) s, \(s.keepAlives) keep-alive(s), \(s.gaps.count) gap(s)")
                for g in s.gaps {
                    let length = g.end.map { "\((Double($0 - g.start) / 1e8).rounded() / 10) s" } ?? "until the end of the log"
                    out.append("    \(LogTime.rfc3339(g.start, fractionDigits: 3)) gap \(length): \(g.reason)")
                }
            }
        }
        out += displayText
        out += causesText
        if !droppedBySink.isEmpty {
            out.append("")
            out.append("dropped by log sinks")
            for (sink, n) in droppedBySink.sorted(by: { $0.key < $1.key }) { out.append("  \(sink): \(n)") }
        }
        out.append("")
        out.append(read.summary)
        return out.joined(separator: "\n")
    }
}

extension LogReadReport {
    package var json: JSONValue {
        ["inputs": .array(inputs.map { .string($0) }), "missing": .array(missing.map { .string($0) }),
         "lines": .int(Int64(lines)), "records": .int(Int64(records)), "blank": .int(Int64(blank)),
         "notJSON": .int(Int64(notJSON)), "unknownSchema": .int(Int64(unknownSchema)),
         "unterminatedLastLines": .int(Int64(unterminatedLastLines)), "tooLong": .int(Int64(tooLong)),
         "clockJumpsBack": .int(Int64(clockJumpsBack)), "largestJumpBack_ms": .double(Double(largestJumpBack) / 1e6)]
    }
}
