import CastCore

/// The report as one self-contained page a client can read (no network): the period in local
/// time, the fleet summary (sortable), per content item its time and plays, per screen a bar on
/// a time axis with a legend and the intervals as a table.
extension DisplayReport {
    package var html: String {
        let esc = TimelinePage.escapeHTML
        var body = "<h1>Proof of display</h1>\n<p id=\"period\">\(esc(periodText))</p>\n"
        body += legend
        // Fleet summary.
        body += "<h2>Fleet</h2>\n<table id=\"fleet\" class=\"sortable\"><thead><tr><th>screen</th><th data-type=\"number\">shown</th>"
            + "<th data-type=\"number\">share of the period</th><th data-type=\"number\">not shown</th><th data-type=\"number\">not observed</th></tr></thead><tbody>\n"
        for d in devices {
            let notShown = d.intervals.filter { $0.kind == .notShown }.reduce(0) { $0 + $1.duration }
            let notObserved = d.intervals.filter { $0.kind == .notObserved }.reduce(0) { $0 + $1.duration }
            body += "<tr class=\"screen-row\" data-device=\"\(esc(d.id))\"><td><a href=\"#\(esc(anchor(d)))\">\(esc(d.name))</a></td>"
                + "<td data-value=\"\(Self.seconds(d.shown))\">\(Self.length(d.shown))</td>"
                + "<td data-value=\"\(share(d.shown))\" class=\"share\">\(share(d.shown)) %</td>"
                + "<td data-value=\"\(Self.seconds(notShown))\">\(Self.length(notShown))</td>"
                + "<td data-value=\"\(Self.seconds(notObserved))\">\(Self.length(notObserved))</td></tr>\n"
        }
        body += "</tbody></table>\n"
        // Per content item.
        body += "<h2>Content</h2>\n<table id=\"contents\" class=\"sortable\"><thead><tr><th>content</th><th data-type=\"number\">shown</th>"
            + "<th data-type=\"number\">plays</th><th data-type=\"number\">screens</th></tr></thead><tbody>\n"
        for c in contents {
            body += "<tr class=\"content-row\"><td>\(esc(c.content))\(c.announcement ? " <span class=\"tag\">announcement</span>" : "")</td>"
                + "<td data-value=\"\(Self.seconds(c.shown))\">\(Self.length(c.shown))</td><td>\(c.plays)</td><td>\(c.screens)</td></tr>\n"
        }
        body += "</tbody></table>\n<h2>Screens</h2>\n"
        for d in devices { body += screen(d) }
        return """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>castline: proof of display</title><style>
            body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
            h1{margin-bottom:.2em}#period{color:#555;margin-top:0}
            table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #ddd}
            th{background:#f4f4f4}table.sortable th{cursor:pointer}td[data-value]{text-align:right}
            .axis{position:relative;height:18px;font-size:11px;color:#555}.axis span{position:absolute;transform:translateX(-50%)}
            .bar{position:relative;height:26px;background:#f4f4f4;border:1px solid #ccc}
            .bar span{position:absolute;top:0;bottom:0;box-shadow:inset 1px 0 0 #fff}
            :is(.bar,.legend) .shown{background:#2e9e44}:is(.bar,.legend) .announcement{background:#2a6fd6}
            :is(.bar,.legend) .not_shown{background:#d8433b}
            :is(.bar,.legend) .not_observed{background:repeating-linear-gradient(45deg,#aaa,#aaa 4px,#ccc 4px,#ccc 8px)}
            tr.announcement td:nth-child(4){color:#2a6fd6;font-weight:600}
            .legend span.swatch{display:inline-block;width:14px;height:14px;vertical-align:middle;margin:0 4px 0 12px}
            tr.not_shown td{color:#a11}tr.not_observed td{color:#666}.tag{font-size:11px;background:#2a6fd6;color:#fff;padding:0 4px;border-radius:3px}
            section.screen{margin-bottom:2em}
            </style></head><body>
            \(body)<script>
            document.querySelectorAll('table.sortable th').forEach(function(th,col){th.addEventListener('click',function(){
              var tbody=th.closest('table').tBodies[0],rows=Array.from(tbody.rows),num=th.dataset.type==='number',asc=th.dataset.asc!=='1';
              rows.sort(function(a,b){var x=a.cells[col],y=b.cells[col];
                var u=num?parseFloat(x.dataset.value||x.textContent):x.textContent,v=num?parseFloat(y.dataset.value||y.textContent):y.textContent;
                return (u<v?-1:u>v?1:0)*(asc?1:-1);});
              th.dataset.asc=asc?'1':'0';rows.forEach(function(r){tbody.appendChild(r);});});});
            </script></body></html>
            """
    }

    private var legend: String {
        "<p class=\"legend\">"
            + [("shown", "shown"), ("announcement", "announcement"),
               ("not_shown", "not shown (idle, app closed, another sender, off, other input, covered)"),
               ("not_observed", "not observed (the link was down, or castline was not running)")]
            .map { "<span class=\"swatch \($0.0)\"></span>\($0.1)" }.joined() + "</p>\n"
            + "<p class=\"note\" id=\"counted-by-app\">\(TimelinePage.escapeHTML(Self.countedByApp))</p>\n"
    }

    private func anchor(_ d: DisplayTimeline.Device) -> String { "screen-" + String(d.id.map { $0.isLetter || $0.isNumber ? $0 : "-" }) }

    /// Ticks at a round step (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h) giving at most 10.
    var ticks: [Int64] {
        let steps: [Int64] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
        let step = (steps.first { period / ($0 * 1_000_000_000) <= 10 } ?? 86400) * 1_000_000_000
        var t = (from / step + 1) * step
        var out: [Int64] = []
        while t < to, out.count < 20 {
            out.append(t)
            t += step
        }
        return out
    }

    private func screen(_ d: DisplayTimeline.Device) -> String {
        let esc = TimelinePage.escapeHTML
        func left(_ t: Int64) -> Double { (Double(t - from) / Double(period) * 10000).rounded() / 100 }
        var s = "<section class=\"screen\" id=\"\(esc(anchor(d)))\" data-device=\"\(esc(d.id))\">"
            + "<h3>\(esc(d.name)) <small>shown \(Self.length(d.shown)), \(share(d.shown)) % of the period</small></h3>\n"
        s += "<div class=\"axis\">" + ticks.map { "<span style=\"left:\(left($0))%\">\(clock.time($0))</span>" }.joined() + "</div>\n"
        s += "<div class=\"bar\">"
        for i in d.intervals {
            let cls = i.isAnnouncement ? "announcement" : i.kind.rawValue
            let width = max(0.15, (Double(i.duration) / Double(period) * 10000).rounded() / 100)
            let title = "\(clock.time(i.from))–\(clock.time(i.to)) \(Self.label(i))" + (i.content.map { ": \($0)" } ?? "")
            s += "<span class=\"\(cls)\" style=\"left:\(left(i.from))%;width:\(width)%\" title=\"\(esc(title))\"></span>"
        }
        s += "</div>\n<table class=\"intervals\"><thead><tr><th>from</th><th>to</th><th>length</th><th>what</th><th>content</th></tr></thead><tbody>\n"
        for i in d.intervals {
            s += "<tr class=\"\(i.isAnnouncement ? "announcement" : i.kind.rawValue)\"><td>\(clock.time(i.from))</td><td>\(clock.time(i.to))</td>"
                + "<td data-value=\"\(Self.seconds(i.duration))\">\(Self.length(i.duration))</td><td>\(esc(Self.label(i)))</td>"
                + "<td>\(esc(i.content ?? ""))</td></tr>\n"
        }
        return s + "</tbody></table></section>\n"
    }
}
