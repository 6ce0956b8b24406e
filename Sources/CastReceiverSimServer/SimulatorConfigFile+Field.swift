import CastCore
import CastReceiverSim

/// A device's field profile in the config file: `"profile"` and `"field"` overrides.
///
/// ```json
/// "field": {"appIdleTimeout": 30, "pausedIdleTimeout": 1200, "idleResetBy": "media",
///           "launch": {"readyAfter": 2, "pageAppExtra": 10, "cancelledProbability": 0.05, "hangProbability": 0.01},
///           "ambient": {"after": 600, "coversApp": true}, "reportsCEC": false, "launchTakesInput": false,
///           "dailyReboot": {"windowStart": "15:00", "windowLength": 3600, "downFor": 60}}
/// ```
/// `null` turns a timer off (`"appIdleTimeout": null`, `"ambient": null`, `"dailyReboot": null`).
extension ConfigReader {
    func fieldProfile(profile: JSONValue?, overrides: JSONValue?, path: String, model: String,
                      isVideoDevice: Bool) throws(SimulatorError) -> FieldProfile? {
        guard profile != nil || overrides != nil else { return nil }
        var base = FieldProfile.forModel(model, isVideoDevice: isVideoDevice)
        if let profile {
            let name = try string(profile, "\(path).profile")
            if name != "model" {
                guard let named = FieldProfile.named(name) else {
                    throw fail("\(path).profile", "unknown profile \"\(name)\" (expected model or one of: "
                               + FieldProfile.builtIn.map(\.name).joined(separator: ", ") + ")")
                }
                base = named
            }
        }
        guard let overrides else { return base }
        return try field(overrides, "\(path).field", base: base)
    }

    private func field(_ value: JSONValue, _ path: String, base: FieldProfile) throws(SimulatorError) -> FieldProfile {
        let o = try object(value, path, allowed: ["appIdleTimeout", "pausedIdleTimeout", "idleResetBy", "launch", "ambient", "reportsCEC",
                                                  "launchTakesInput", "dailyReboot"])
        var result = base
        if let v = o["appIdleTimeout"] { result.appIdleTimeout = try optionalSeconds(v, "\(path).appIdleTimeout") }
        if let v = o["pausedIdleTimeout"] { result.pausedIdleTimeout = try optionalSeconds(v, "\(path).pausedIdleTimeout") }
        if let v = o["idleResetBy"] {
            let name = try string(v, "\(path).idleResetBy")
            guard let reset = FieldProfile.IdleReset(rawValue: name) else {
                throw fail("\(path).idleResetBy", "expected media or any-message, found \"\(name)\"")
            }
            result.idleResetBy = reset
        }
        if let v = o["launch"] {
            let l = try object(v, "\(path).launch", allowed: ["readyAfter", "pageAppExtra", "cancelledProbability", "hangProbability"])
            if let r = l["readyAfter"] { result.launch.readyAfter = try optionalSeconds(r, "\(path).launch.readyAfter") }
            if let r = l["pageAppExtra"] { result.launch.pageAppExtra = try double(r, "\(path).launch.pageAppExtra") }
            if let r = l["cancelledProbability"] { result.launch.cancelledProbability = try probability(r, "\(path).launch.cancelledProbability") }
            if let r = l["hangProbability"] { result.launch.hangProbability = try probability(r, "\(path).launch.hangProbability") }
            guard result.launch.cancelledProbability + result.launch.hangProbability <= 1 else {
                throw fail("\(path).launch", "cancelledProbability + hangProbability must be at most 1")
            }
        }
        if let v = o["ambient"] {
            if v.isNull {
                result.ambient = nil
            } else {
                let a = try object(v, "\(path).ambient", allowed: ["after", "coversApp"])
                guard let after = a["after"] else { throw fail("\(path).ambient", "missing \"after\" (seconds)") }
                var coversApp = true
                if let c = a["coversApp"] { coversApp = try bool(c, "\(path).ambient.coversApp") }
                result.ambient = FieldProfile.Ambient(after: try double(after, "\(path).ambient.after"), coversApp: coversApp)
            }
        }
        if let v = o["reportsCEC"] { result.reportsCEC = try bool(v, "\(path).reportsCEC") }
        if let v = o["launchTakesInput"] { result.launchTakesInput = try bool(v, "\(path).launchTakesInput") }
        if let v = o["dailyReboot"] {
            if v.isNull {
                result.dailyReboot = nil
            } else {
                let r = try object(v, "\(path).dailyReboot", allowed: ["windowStart", "windowLength", "downFor"])
                guard let start = r["windowStart"] else { throw fail("\(path).dailyReboot", "missing \"windowStart\" (\"HH:MM\" local time)") }
                var length = 3600.0
                if let l = r["windowLength"] { length = try double(l, "\(path).dailyReboot.windowLength") }
                var downFor = 60.0
                if let d = r["downFor"] { downFor = try double(d, "\(path).dailyReboot.downFor") }
                guard length <= 86_400 else { throw fail("\(path).dailyReboot.windowLength", "must be at most 86400 s") }
                result.dailyReboot = FieldProfile.DailyReboot(windowStart: try timeOfDay(start, "\(path).dailyReboot.windowStart"),
                                                              windowLength: length, downFor: downFor)
            }
        }
        return result
    }

    /// Seconds (≥ 0, at most a day) or null.
    private func optionalSeconds(_ value: JSONValue, _ path: String) throws(SimulatorError) -> Double? {
        if value.isNull { return nil }
        let seconds = try double(value, path)
        guard seconds <= 86_400 else { throw fail(path, "must be at most 86400 s, found \(value)") }
        return seconds
    }

    private func probability(_ value: JSONValue, _ path: String) throws(SimulatorError) -> Double {
        let p = try double(value, path)
        guard p <= 1 else { throw fail(path, "expected a probability 0…1, found \(value)") }
        return p
    }

    /// `"HH:MM"` (local time) or seconds after midnight.
    private func timeOfDay(_ value: JSONValue, _ path: String) throws(SimulatorError) -> Double {
        if case .string(let text) = value {
            let parts = text.split(separator: ":")
            guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else {
                throw fail(path, "expected \"HH:MM\", found \"\(text)\"")
            }
            return Double(h * 3600 + m * 60)
        }
        let seconds = try double(value, path)
        guard seconds < 86_400 else { throw fail(path, "must be below 86400 s after midnight") }
        return seconds
    }
}
