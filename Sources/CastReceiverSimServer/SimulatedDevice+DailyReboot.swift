import CastCore
import CastProtocol
import CastReceiverSim
import Glibc
import NIOCore

/// The field profile's daily reboot (stestagg/dashcast#20: a Chromecast restarts itself every day
/// between 3 and 4 pm local time): a timer on the device's loop, one reboot a day at a moment
/// drawn in the window, the same as the `reboot` control command.
extension SimulatedDevice {
    /// Schedules the next daily reboot at least `minimumDelay` seconds away. On the loop.
    func scheduleDailyReboot(minimumDelay: Double) {
        dailyRebootTask?.cancel()
        dailyRebootTask = nil
        guard let reboot = fieldProfile.dailyReboot else { return }
        let draw = Double(rebootRandom.next() >> 11) / Double(1 << 53)
        let position = dayClock.position(now: MonotonicClock.seconds())
        let delay = reboot.secondsUntilReboot(dayPosition: position, draw: draw, minimumDelay: minimumDelay)
        guard delay.isFinite else { return }
        log.info("daily reboot in \(Int(delay)) s (profile \(fieldProfile.name))", ["delay": .double(delay)])
        dailyRebootTask = loop.scheduleTask(in: .seconds(clamping: delay)) { [weak self] in
            guard let self else { return }
            frameLogEvent("fault", connection: nil, peer: nil, fields: ["kind": "daily-reboot", "downFor": .double(reboot.downFor)])
            _ = self.reboot(downFor: reboot.downFor)
            scheduleDailyReboot(minimumDelay: reboot.windowLength + reboot.downFor)
        }
    }

}

/// The device's time of day in the field profile's (scaled) seconds: local time at start,
/// divided by the time scale, then running at the monotonic clock's pace, so a scaled day
/// passes in `86400 / scale` real seconds. Value type.
struct FieldDayClock: Sendable {
    let origin: Double
    let originMonotonic: Double

    init(scale: Double, now: Double = MonotonicClock.seconds()) {
        origin = Self.localSecondsOfDay() / max(1, scale)
        originMonotonic = now
    }

    func position(now: Double) -> Double { origin + (now - originMonotonic) }

    /// Seconds since local midnight, now.
    static func localSecondsOfDay() -> Double {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return Double(now % 86_400) }
        return Double(parts.tm_hour * 3600 + parts.tm_min * 60 + parts.tm_sec)
    }
}
