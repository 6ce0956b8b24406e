import CastCore

/// What castline learned of each TV's start latency (PLAY's arrival → first frame): measured at
/// every synchronised start and by `castline sync calibrate`, kept per device and used for its
/// model when a device of that model has none. Value type; the file is the caller's.
package struct SyncCalibration: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        package var model: String
        /// Seconds.
        package var startLatency: Double
        package var samples: Int
        package init(model: String, startLatency: Double, samples: Int) {
            self.model = model
            self.startLatency = startLatency
            self.samples = samples
        }
    }

    package private(set) var devices: [String: Entry] = [:]

    package init() {}

    /// The start latency to plan with: the device's own, else the median of its model's, else 0.
    package func startLatency(device: String, model: String) -> Double {
        if let own = devices[device] { return own.startLatency }
        let same = devices.values.filter { $0.model == model }.map(\.startLatency).sorted()
        guard !same.isEmpty else { return 0 }
        return same[same.count / 2]
    }

    /// Folds one measurement in: the mean of the measurements so far, until it has `1 / weight`
    /// of them; then each moves it by `weight` (a TV whose start latency changes is followed).
    package mutating func learn(device: String, model: String, startLatency measured: Double, weight: Double) {
        guard measured.isFinite else { return }
        let value = min(max(measured, 0), 10)
        if var entry = devices[device] {
            let step = max(1 / Double(entry.samples + 1), min(max(weight, 0), 1))
            entry.startLatency += step * (value - entry.startLatency)
            entry.samples += 1
            entry.model = model
            devices[device] = entry
        } else {
            devices[device] = Entry(model: model, startLatency: value, samples: 1)
        }
    }

    package var json: JSONValue {
        var object = JSONObject()
        for id in devices.keys.sorted() {
            let entry = devices[id]!
            object.append(key: id, value: ["model": .string(entry.model), "start_latency_ms": .double((entry.startLatency * 1e4).rounded() / 10),
                                           "samples": .int(Int64(entry.samples))])
        }
        return ["version": 1, "devices": .object(object)]
    }

    /// Reads what ``json`` wrote; entries that make no sense are skipped.
    package init(json: JSONValue) {
        guard case .object(let object)? = json["devices"] else { return }
        for (id, value) in object {
            guard let model = value["model"]?.string, let ms = value["start_latency_ms"]?.double, ms.isFinite, ms >= 0, ms <= 10_000 else { continue }
            devices[id] = Entry(model: model, startLatency: ms / 1000, samples: Int(value["samples"]?.int ?? 1))
        }
    }
}
