import CastlineJobs
import CastCore
import CastLogging
import CastSender
import CastlineConfig
import CastlineLogs

/// An announce job (`announce:`): no state machine per device; the job plays its announcement
/// through the control plane (``ControlPlane/runJob(_:)``, every matching device at once, each
/// restored) when run, and on its own at its `at:` times.
extension JobDriver {
    /// A device the announce job matches: kept, for the job's state.
    func announceDeviceFound(_ device: CastDevice) {
        if devices[device.id] == nil {
            log.info("device \(device.friendlyName) matches", ["device": .string(device.id), "deviceName": .string(device.friendlyName)])
        }
        devices[device.id] = device
    }

    /// The once-a-second check of the `at:` times.
    func announcementTick(_ entry: AnnouncementEntry) {
        guard let times = entry.times else { return }
        let now = wallClock()
        if announcementTimer == nil { announcementTimer = AnnouncementTimer(times: times, now: now) }
        switch announcementTimer!.check(now: now) {
        case .wait:
            return
        case .missed(let due, let late):
            log.warning("announcement due at \(Self.stamp(due)) missed by \(late) s (the daemon was not running or the clock jumped);"
                        + " next at \(announcementTimer!.next.map(Self.stamp) ?? "never")", ["due": .string(Self.stamp(due)), "late": .int(late)])
        case .fire(let due):
            guard !announcing else {
                log.warning("announcement due at \(Self.stamp(due)) skipped: the previous one is still playing", ["due": .string(Self.stamp(due))])
                return
            }
            guard let runner = announcementRunner else { return }
            log.info("announcement due at \(Self.stamp(due)): playing \(entry.media) on the job's devices", ["due": .string(Self.stamp(due))])
            announcing = true
            let name = job.name
            Task { [weak self] in
                _ = await runner(name)   // the run records its answer (recordRun)
                await self?.announced()
            }
        }
    }

    func announced() { announcing = false }

    /// For `GET /v1/jobs/{name}`: the next time, whether one plays now, and the last run's answer.
    package var announcementState: JSONValue {
        var state = JSONObject()
        state.set("next", announcementTimer?.next.map { .string(Self.stamp($0)) } ?? .null)
        state.set("playing", .bool(announcing))
        if let (at, answer) = lastAnnouncement {
            var last = JSONObject()
            last.set("at", .string(Self.stamp(at)))
            if case .object(let object) = answer { for (key, value) in object { last.set(key, value) } }
            state.set("last", .object(last))
        }
        return .object(state)
    }

    /// Now on the driver's clock: when a run starts.
    package func now() -> Int64 { wallClock() }

    /// A run's answer (timed, or through the API or the CLI) and when it started.
    package func recordRun(_ answer: JSONValue, startedAt: Int64) {
        lastAnnouncement = (startedAt, answer)
    }

    static func stamp(_ unixSeconds: Int64) -> String { LogTime.rfc3339(unixSeconds * 1_000_000_000, fractionDigits: 0) }
}

extension JobDriver {
    /// The devices an announce job matches, by name.
    package var matchedDevices: [(device: String, id: String)] {
        devices.keys.map { (devices[$0]!.friendlyName, $0) }.sorted { $0.device < $1.device }
    }
}
