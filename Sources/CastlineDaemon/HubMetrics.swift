import CastProtocol
import Synchronization

/// The hub's counters and the request-latency histogram, rendered with the gauges of the moment
/// in the Prometheus text exposition format (`GET /metrics`). Thread-safe.
package final class HubMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    package static let buckets: [Double] = [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: HubMetrics.buckets.count)
        var sum = 0.0
        var count = 0
    }

    private struct State {
        var latency: [String: Histogram] = [:]
        var failures: [String: Int] = [:]   // "type\u{0}reason"
        var counters: [String: Int] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// What the sessions' connections call with every request's outcome.
    package var requestObserver: CastRequestObserver {
        { [self] type, seconds, failure in self.record(type: type, seconds: seconds, failure: failure) }
    }

    func record(type: String, seconds: Double, failure: CastRequestError?) {
        state.withLock { state in
            if let failure {
                state.failures[type + "\u{0}" + Self.reason(failure), default: 0] += 1
                return
            }
            var histogram = state.latency[type] ?? Histogram()
            if let bucket = Self.buckets.firstIndex(where: { seconds <= $0 }) { histogram.counts[bucket] += 1 }
            histogram.sum += seconds
            histogram.count += 1
            state.latency[type] = histogram
        }
    }

    /// Adds one to a plain counter (`reconnects`, `api_requests`, …).
    package func count(_ name: String, by amount: Int = 1) {
        state.withLock { $0.counters[name, default: 0] += amount }
    }

    static func reason(_ error: CastRequestError) -> String {
        switch error {
        case .timedOut: return "timeout"
        case .disconnected: return "disconnected"
        case .cancelled: return "cancelled"
        case .superseded: return "superseded"
        case .loadFailed: return "load_failed"
        case .loadCancelled: return "load_cancelled"
        case .invalidPlayerState: return "invalid_player_state"
        case .invalidRequest: return "invalid_request"
        case .launchError: return "launch_error"
        case .deviceError: return "error"
        }
    }

    /// A gauge family of the moment: a name, its help, and values by label set.
    package struct Gauge: Sendable {
        package var name: String
        package var help: String
        package var values: [(labels: [(String, String)], value: Double)]

        package init(_ name: String, _ help: String, _ values: [(labels: [(String, String)], value: Double)]) {
            self.name = name
            self.help = help
            self.values = values
        }
    }

    /// The exposition text: `gauges`, then the counters and the histogram.
    package func render(gauges: [Gauge], counters extra: [Gauge] = []) -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        for gauge in gauges { Self.family(&out, gauge, type: "gauge") }
        for counter in extra { Self.family(&out, counter, type: "counter") }
        out += "# HELP castline_reconnects_total Sessions that were suspended and resumed.\n# TYPE castline_reconnects_total counter\n"
        out += "castline_reconnects_total \(snapshot.counters["reconnects"] ?? 0)\n"
        out += "# HELP castline_request_failures_total Requests to devices that failed, by type and reason.\n"
        out += "# TYPE castline_request_failures_total counter\n"
        for key in snapshot.failures.keys.sorted() {
            let parts = key.split(separator: "\u{0}", maxSplits: 1).map(String.init)
            out += "castline_request_failures_total{type=\"\(Self.escape(parts[0]))\",reason=\"\(Self.escape(parts.count > 1 ? parts[1] : ""))\"} \(snapshot.failures[key]!)\n"
        }
        out += "# HELP castline_request_duration_seconds Time from a request to its reply, by type.\n"
        out += "# TYPE castline_request_duration_seconds histogram\n"
        for type in snapshot.latency.keys.sorted() {
            let histogram = snapshot.latency[type]!
            let label = "type=\"\(Self.escape(type))\""
            var cumulative = 0
            for (index, bound) in Self.buckets.enumerated() {
                cumulative += histogram.counts[index]
                out += "castline_request_duration_seconds_bucket{\(label),le=\"\(Self.number(bound))\"} \(cumulative)\n"
            }
            out += "castline_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(histogram.count)\n"
            out += "castline_request_duration_seconds_sum{\(label)} \(Self.number(histogram.sum))\n"
            out += "castline_request_duration_seconds_count{\(label)} \(histogram.count)\n"
        }
        return out
    }

    /// The exposition text of `gauges` and `counters` alone (a listener's own figures).
    package static func families(gauges: [Gauge], counters: [Gauge] = []) -> String {
        var out = ""
        for gauge in gauges { family(&out, gauge, type: "gauge") }
        for counter in counters { family(&out, counter, type: "counter") }
        return out
    }

    private static func family(_ out: inout String, _ gauge: Gauge, type: String) {
        out += "# HELP \(gauge.name) \(gauge.help)\n# TYPE \(gauge.name) \(type)\n"
        for (labels, value) in gauge.values {
            let text = labels.isEmpty ? "" : "{" + labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
            out += "\(gauge.name)\(text) \(number(value))\n"
        }
    }

    /// A label value with `\`, `"` and newlines escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }

    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
