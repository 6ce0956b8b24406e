import CastCore

/// `castline logs report --by device`: proof of display from the logs alone. For each screen a
/// job kept media or a page on: what showed from when to when, every gap with its cause (the
/// app stopped, another sender, a failed cast, the device lost), and the time castline could not
/// see the device (its connection suspended: the network, a reboot), with the share of the
/// period the screen showed its content. Pure: built from ``LogStatistics``.
public struct DisplayReport: Sendable {
    public struct Unobserved: Sendable, Equatable {
        public var start: Int64
        public var end: Int64?
        public var reason: String
    }

    public struct Screen: Sendable {
        public var screen: LogStatistics.Screen
        public var unobserved: [Unobserved]
    }

    public let from: Int64
    public let to: Int64
    public let screens: [Screen]

    public init(_ stats: LogStatistics) {
        from = stats.first ?? 0
        to = stats.last ?? 0
        screens = stats.screenReport.map { screen in
            Screen(screen: screen, unobserved: stats.suspensions.filter { $0.device == screen.device }.map {
                Unobserved(start: $0.start, end: $0.end, reason: $0.reason)
            })
        }
    }

    var period: Double { Double(max(1, to - from)) / 1e9 }

    static func seconds(_ nanos: Int64) -> Double { (Double(nanos) / 1e8).rounded() / 10 }
    static func time(_ nanos: Int64) -> String { LogTime.rfc3339(nanos, fractionDigits: 1) }

    public var text: String {
        var out = ["proof of display, \(Self.time(from)) to \(Self.time(to)) (\(Self.seconds(to - from)) s)"]
        if screens.isEmpty { out.append("  no job kept anything on a screen in these records (JobDriver records at info)") }
        for s in screens {
            let share = (Double(s.screen.shown) / 1e9 / period * 1000).rounded() / 10
            out.append("")
            out.append("\(s.screen.deviceName) (\(s.screen.device)): shown \(Self.seconds(s.screen.shown)) s, \(share) % of the period")
            var lines: [(Int64, String)] = []
            for show in s.screen.shows {
                lines.append((show.start, "  \(Self.time(show.start)) to \(show.end.map(Self.time) ?? "the end")  \(show.url)"))
            }
            for gap in s.screen.gaps {
                let length = gap.end.map { "\(Self.seconds($0 - gap.start)) s" } ?? "until the end"
                lines.append((gap.start, "  \(Self.time(gap.start)) gap, \(length): \(gap.reason)"))
            }
            for blind in s.unobserved {
                let length = blind.end.map { "\(Self.seconds($0 - blind.start)) s" } ?? "until the end"
                lines.append((blind.start, "  \(Self.time(blind.start)) not observed, \(length): \(blind.reason)"))
            }
            out += lines.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return out.joined(separator: "\n")
    }

    public var json: JSONValue {
        func interval(_ start: Int64, _ end: Int64?) -> JSONObject {
            var o = JSONObject()
            o.set("start", .string(Self.time(start)))
            o.set("end", end.map { .string(Self.time($0)) } ?? .null)
            o.set("duration_s", end.map { .double(Self.seconds($0 - start)) } ?? .null)
            return o
        }
        return ["from": .string(Self.time(from)), "to": .string(Self.time(to)), "screens": .array(screens.map { s in
            ["device": .string(s.screen.device), "deviceName": .string(s.screen.deviceName), "shown_s": .double(Self.seconds(s.screen.shown)),
             "shows": .array(s.screen.shows.map { show in
                 var o = interval(show.start, show.end)
                 o.set("url", .string(show.url))
                 return .object(o)
             }),
             "gaps": .array(s.screen.gaps.map { gap in
                 var o = interval(gap.start, gap.end)
                 o.set("reason", .string(gap.reason))
                 return .object(o)
             }),
             "unobserved": .array(s.unobserved.map { blind in
                 var o = interval(blind.start, blind.end)
                 o.set("reason", .string(blind.reason))
                 return .object(o)
             })]
        })]
    }

    /// One self-contained page: per screen a bar over the period (shown, gaps, not observed)
    /// and the same events as a table.
    public var html: String {
        func escape(_ text: String) -> String {
            var out = ""
            for c in text {
                switch c {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                default: out.append(c)
                }
            }
            return out
        }
        func span(_ start: Int64, _ end: Int64?, _ kind: String, _ title: String) -> String {
            let left = Double(start - from) / 1e9 / period * 100
            let width = max(0.2, Double((end ?? to) - start) / 1e9 / period * 100)
            return "<span class=\"\(kind)\" style=\"left:\(left)%;width:\(width)%\" title=\"\(escape(title))\"></span>"
        }
        var body = "<h1>Proof of display</h1><p id=\"period\">\(Self.time(from)) to \(Self.time(to))</p>"
        for s in screens {
            body += "<section class=\"screen\" data-device=\"\(escape(s.screen.device))\"><h2>\(escape(s.screen.deviceName))</h2><div class=\"bar\">"
            for show in s.screen.shows { body += span(show.start, show.end, "shown", show.url) }
            for gap in s.screen.gaps { body += span(gap.start, gap.end, "gap", gap.reason) }
            for blind in s.unobserved { body += span(blind.start, blind.end, "unobserved", blind.reason) }
            body += "</div><table><tr><th>from</th><th>length</th><th>what</th></tr>"
            var rows: [(Int64, String)] = []
            for show in s.screen.shows {
                rows.append((show.start, "<tr class=\"shown\"><td>\(Self.time(show.start))</td><td>\(show.end.map { "\(Self.seconds($0 - show.start)) s" } ?? "to the end")</td><td>shown: \(escape(show.url))</td></tr>"))
            }
            for gap in s.screen.gaps {
                rows.append((gap.start, "<tr class=\"gap\"><td>\(Self.time(gap.start))</td><td>\(gap.end.map { "\(Self.seconds($0 - gap.start)) s" } ?? "to the end")</td><td>gap: \(escape(gap.reason))</td></tr>"))
            }
            for blind in s.unobserved {
                rows.append((blind.start, "<tr class=\"unobserved\"><td>\(Self.time(blind.start))</td><td>\(blind.end.map { "\(Self.seconds($0 - blind.start)) s" } ?? "to the end")</td><td>not observed: \(escape(blind.reason))</td></tr>"))
            }
            body += rows.sorted { $0.0 < $1.0 }.map(\.1).joined() + "</table></section>"
        }
        return """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>castline: proof of display</title><style>
            body{font-family:sans-serif;margin:2em}.bar{position:relative;height:28px;background:#eee;margin:.5em 0}
            .bar span{position:absolute;top:0;bottom:0}.shown{background:#3a3}.gap{background:#d33}.unobserved{background:#999}
            table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}tr.gap td{color:#a00}tr.unobserved td{color:#555}
            </style></head><body>\(body)</body></html>
            """
    }
}
