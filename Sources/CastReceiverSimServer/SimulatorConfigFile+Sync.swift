import CastCore
import CastReceiverSim

/// A device's synchronisation keys in the config file (issue 45):
///
/// ```json
/// "latency": {"base_ms": 50, "jitter_ms": 20}, "first_frame": {"base_ms": 0, "jitter_ms": 150},
/// "clock_drift_ppm": 200, "playback_rates": {"min": 0.5, "max": 2}
/// ```
/// Delays are milliseconds in 0…10000 (`jitter_ms` optional, default 0); the drift is at most
/// ±10000 ppm; rates lie in 0.0625…16 with `min` ≤ `max`.
extension ConfigReader {
    static let syncKeys: Set<String> = ["latency", "first_frame", "clock_drift_ppm", "playback_rates"]

    func applySync(_ o: JSONObject, _ path: String, to device: inout SimulatedDeviceConfiguration) throws(SimulatorError) {
        if let v = o["latency"] { device.latency = try delay(v, "\(path).latency") }
        if let v = o["first_frame"] { device.firstFrame = try delay(v, "\(path).first_frame") }
        if let v = o["clock_drift_ppm"] {
            let bound = DeviceProfile.maximumClockDriftPPM
            guard let ppm = v.double, ppm.isFinite, abs(ppm) <= bound else {
                throw fail("\(path).clock_drift_ppm", "expected parts per million in -\(Int(bound))…\(Int(bound)), found \(v)")
            }
            device.clockDriftPPM = ppm
        }
        if let v = o["playback_rates"] {
            let r = try object(v, "\(path).playback_rates", allowed: ["min", "max"])
            let bounds = DeviceProfile.playbackRateBounds
            var low = DeviceProfile.defaultPlaybackRates.lowerBound
            var high = DeviceProfile.defaultPlaybackRates.upperBound
            for (key, target) in [("min", 0), ("max", 1)] {
                guard let value = r[key] else { continue }
                guard let rate = value.double, bounds.contains(rate) else {
                    throw fail("\(path).playback_rates.\(key)", "expected a rate in \(bounds.lowerBound)…\(bounds.upperBound), found \(value)")
                }
                if target == 0 { low = rate } else { high = rate }
            }
            guard low <= high else { throw fail("\(path).playback_rates", "min \(low) is above max \(high)") }
            device.playbackRates = low...high
        }
    }

    /// `{"base_ms": B, "jitter_ms": J}` in milliseconds.
    private func delay(_ value: JSONValue, _ path: String) throws(SimulatorError) -> JitteredDelay {
        let d = try object(value, path, allowed: ["base_ms", "jitter_ms"])
        var parts: [Double] = []
        for key in ["base_ms", "jitter_ms"] {
            guard let part = d[key] else {
                parts.append(0)
                continue
            }
            guard let number = part.double else { throw fail("\(path).\(key)", "expected milliseconds in 0…10000, found \(part)") }
            parts.append(number)
        }
        switch JitteredDelay.milliseconds(base: parts[0], jitter: parts[1]) {
        case .success(let delay): return delay
        case .failure(let error): throw fail(path, error.message)
        }
    }
}
