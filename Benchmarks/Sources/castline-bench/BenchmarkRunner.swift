#if canImport(Glibc)
import Glibc
#endif

/// Runs a measurement several times and prints one JSON line with the median and the spread
/// (min/max), so machine noise is visible next to each figure.
struct BenchmarkRunner {
    var runs = 5
    /// Only benchmarks whose name starts with this run (first command-line argument).
    var only: String?

    func selected(_ name: String) -> Bool { only.map { name.hasPrefix($0) } ?? true }
    /// `CASTLINE_BENCH_SCALE` (e.g. 0.01) shrinks every iteration count, for profiling runs.
    static let scale: Double = getenv("CASTLINE_BENCH_SCALE").flatMap { Double(String(cString: $0)) } ?? 1

    static func scaled(_ n: Int) -> Int { max(1, Int(Double(n) * scale)) }

    static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// `body(iterations)` does the work; the figure is nanoseconds per iteration.
    func nanosPerOp(_ name: String, iterations: Int, extra: [String: String] = [:], _ body: (Int) -> Void) {
        guard selected(name) else { return }
        let iterations = Self.scaled(iterations)
        body(max(iterations / 20, 1))  // warm-up
        var samples: [Double] = []
        for _ in 0..<runs {
            let start = Self.monotonicNanos()
            body(iterations)
            samples.append(Double(Self.monotonicNanos() - start) / Double(iterations))
        }
        emit(name, samples: samples, unit: "ns/op", iterations: iterations, extra: extra)
    }

    /// Same, reported as operations per second.
    func opsPerSecond(_ name: String, unit: String, iterations: Int, _ body: (Int) -> Void) {
        guard selected(name) else { return }
        let iterations = Self.scaled(iterations)
        body(max(iterations / 20, 1))
        var samples: [Double] = []
        for _ in 0..<runs {
            let start = Self.monotonicNanos()
            body(iterations)
            samples.append(Double(iterations) * 1e9 / Double(Self.monotonicNanos() - start))
        }
        emit(name, samples: samples, unit: unit, iterations: iterations, extra: [:])
    }

    func emit(_ name: String, samples: [Double], unit: String, iterations: Int, extra: [String: String]) {
        let sorted = samples.sorted()
        let median = sorted[sorted.count / 2]
        var fields = [
            "\"name\":\"\(name)\"", "\"value\":\(Self.round(median))", "\"unit\":\"\(unit)\"",
            "\"min\":\(Self.round(sorted.first!))", "\"max\":\(Self.round(sorted.last!))",
            "\"runs\":\(samples.count)", "\"iterations\":\(iterations)",
        ]
        for (k, v) in extra.sorted(by: { $0.key < $1.key }) { fields.append("\"\(k)\":\(v)") }
        print("{" + fields.joined(separator: ",") + "}")
        fflush(nil)  // flush stdout also when piped
    }

    static func round(_ v: Double) -> String {
        if v >= 1000 { return String(Int(v.rounded())) }
        return String((v * 1000).rounded() / 1000)
    }
}
