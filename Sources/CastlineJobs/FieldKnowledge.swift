import CastCore
import CastlineConfig
import CastSender
import CastLogging
import Synchronization

/// What castline knows of one device's field behaviour (how long its receiver lets an app without
/// media run, what resets that timer, how long a launch takes, whether ambient mode covers a
/// running app), and where each fact comes from. Value type, resolved by ``FieldKnowledgeBook``.
///
/// The order, most specific first: the job's `idle_timeout`, the config (`daemon.idle_timeouts`,
/// `daemon.field_profiles`), what this device was seen to do (``LearnedIdle``), the model's
/// profile (``FieldProfile/forModel(_:isVideoDevice:)``). Durations are divided by
/// `daemon.field_time_scale`, except what was learned (measured in the scaled time already).
package struct FieldKnowledge: Sendable, Equatable {
    /// The profile the facts start from (scaled), with the config's overrides applied.
    package var profile: FieldProfile
    /// Seconds after which the receiver closes an app that plays no media; nil: never (or not known).
    package var idleTimeout: Double?
    package var idleTimeoutSource: String
    package var idleResetBy: FieldProfile.IdleReset
    package var idleResetSource: String

    /// Whether sending the page again (a keep-alive) resets the idle timer: false where only media
    /// does, and then castline sends none and relaunches at once after each close instead.
    package var keepAliveResetsTimer: Bool { idleResetBy == .anyMessage }

    /// How long a LAUNCH of an app may take before castline abandons it: three times what the
    /// model takes (a web-page app fetches its page first), and at least `floor`.
    package func launchBound(pageApp: Bool, floor: Double) -> Double {
        let expected = (profile.launch.readyAfter ?? 1) + (pageApp ? profile.launch.pageAppExtra : 0)
        return max(floor, expected * 3)
    }
}

/// An idle close castline saw: the job's app (showing no media) stopped with no sender asking.
/// What it tells: the timeout, and (when keep-alives were sent and did not help) that only media
/// resets the timer. Pure.
package struct IdleCloseObservation: Sendable, Equatable {
    /// Seconds from the app's launch (or its last media) to the close.
    package var sinceMedia: Double
    /// Seconds from castline's last message to the app (a keep-alive, else the launch) to the close.
    package var sinceLastSend: Double
    /// Keep-alives sent between the launch and the close.
    package var keepAlives: Int

    package init(sinceMedia: Double, sinceLastSend: Double, keepAlives: Int) {
        self.sinceMedia = sinceMedia
        self.sinceLastSend = sinceLastSend
        self.keepAlives = keepAlives
    }
}

/// What one device was seen to do, kept across restarts (``FieldKnowledgeBook``).
package struct LearnedIdle: Sendable, Equatable {
    package var model: String
    package var idleTimeout: Double
    /// Learned only from a close that keep-alives did not prevent, twice at the same time.
    package var idleResetBy: FieldProfile.IdleReset?
    /// Closes observed, and the last one's time since media (to compare the next with).
    package var observations: Int
    package var lastSinceMedia: Double
    package var lastKeepAlives: Int
    /// Unix seconds of the last observation.
    package var updated: Int64

    /// Two closes at the same time since media (within 10 %), both after keep-alives: the
    /// keep-alives did not reset the timer.
    static func sameTime(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 0.1 * max(a, b) }

    /// What an observation teaches, given what was known. A close with no keep-alive before it
    /// measures the timeout exactly; after keep-alives, either only media resets the timer (the
    /// close comes at the same time since media as before) or the timeout is shorter than the
    /// keep-alive's interval (then the time since the last send bounds it).
    package static func learn(_ observation: IdleCloseObservation, previous: LearnedIdle?, model: String, now: Int64) -> LearnedIdle {
        var learned = previous ?? LearnedIdle(model: model, idleTimeout: observation.sinceMedia, idleResetBy: nil, observations: 0,
                                              lastSinceMedia: observation.sinceMedia, lastKeepAlives: 0, updated: now)
        learned.model = model
        if observation.keepAlives == 0 {
            learned.idleTimeout = observation.sinceMedia
        } else if let previous, previous.lastKeepAlives > 0 || previous.idleResetBy == .media,
                  sameTime(previous.lastSinceMedia, observation.sinceMedia) {
            learned.idleTimeout = min(previous.lastSinceMedia, observation.sinceMedia)
            learned.idleResetBy = .media
        } else {
            learned.idleTimeout = observation.sinceLastSend
        }
        learned.observations += 1
        learned.lastSinceMedia = observation.sinceMedia
        learned.lastKeepAlives = observation.keepAlives
        learned.updated = now
        return learned
    }

    var json: JSONValue {
        var object: JSONObject = ["model": .string(model), "idle_timeout": .double(idleTimeout), "observations": .int(Int64(observations)),
                                  "last_since_media": .double(lastSinceMedia), "last_keep_alives": .int(Int64(lastKeepAlives)),
                                  "updated": .int(updated)]
        if let idleResetBy { object.set("idle_reset_by", .string(idleResetBy.rawValue)) }
        return .object(object)
    }

    init(model: String, idleTimeout: Double, idleResetBy: FieldProfile.IdleReset?, observations: Int, lastSinceMedia: Double,
         lastKeepAlives: Int, updated: Int64) {
        self.model = model
        self.idleTimeout = idleTimeout
        self.idleResetBy = idleResetBy
        self.observations = observations
        self.lastSinceMedia = lastSinceMedia
        self.lastKeepAlives = lastKeepAlives
        self.updated = updated
    }

    init?(json: JSONValue) {
        guard let timeout = json["idle_timeout"]?.double, timeout > 0, timeout.isFinite else { return nil }
        model = json["model"]?.string ?? ""
        idleTimeout = timeout
        idleResetBy = json["idle_reset_by"]?.string.flatMap(FieldProfile.IdleReset.init(rawValue:))
        observations = Int(json["observations"]?.int ?? 1)
        lastSinceMedia = json["last_since_media"]?.double ?? timeout
        lastKeepAlives = Int(json["last_keep_alives"]?.int ?? 0)
        updated = json["updated"]?.int ?? 0
    }
}

/// Every device's ``FieldKnowledge``: the config's field settings, and what devices were seen to
/// do (``LearnedIdle``), kept in `field-learned.json` in the state folder (mode 0600) so that a
/// restart knows them. Readable from any thread (a mutex; the job drivers and the registry share it).
package final class FieldKnowledgeBook: Sendable {
    private struct State {
        var settings: DaemonSettings
        var learned: [String: LearnedIdle] = [:]
    }

    private let path: String?
    private let state: Mutex<State>
    private let log: Logger

    /// `path`: the file learned facts are kept in (nil: kept in memory only).
    package init(settings: DaemonSettings, path: String?, logSystem: LogSystem) {
        self.path = path
        log = Logger(class: "FieldKnowledge", system: logSystem)
        var initial = State(settings: settings)
        if let path {
            do {
                if let bytes = try SmallFile.read(path: path, limit: 1 << 20) {
                    let json = try JSONValue.parse(String(decoding: bytes, as: UTF8.self))
                    if case .object(let devices)? = json["devices"] {
                        for (id, entry) in devices { if let learned = LearnedIdle(json: entry) { initial.learned[id] = learned } }
                    }
                }
            } catch {
                log.warning("cannot read what devices were seen to do from \(path): \(error); starting afresh", ["path": .string(path)])
            }
        }
        state = Mutex(initial)
    }

    package var timeScale: Double { state.withLock { $0.settings.fieldTimeScale } }

    /// The app id castline's receiver page is registered under (`daemon.castline_receiver_app_id`).
    package var castlineReceiverAppID: String? { state.withLock { $0.settings.castlineReceiverAppID } }

    /// The config changed (SIGHUP): its field settings apply from now on.
    package func update(_ settings: DaemonSettings) { state.withLock { $0.settings = settings } }

    /// What castline assumes of `device`; `jobIdleTimeout`: a site job's own `idle_timeout`.
    package func knowledge(for device: CastDevice, jobIdleTimeout: Double? = nil) -> FieldKnowledge {
        let (settings, learned) = state.withLock { ($0.settings, $0.learned[device.id]) }
        let model = device.modelName
        let scale = settings.fieldTimeScale
        let scaledNote = scale != 1 ? " ÷ \(scale.formatted) (daemon.field_time_scale)" : ""
        let (assumed, override) = settings.assumedProfile(model: model, isVideoDevice: device.capabilities?.contains(.videoOut) ?? true)
        let base = assumed.scaled(by: scale)
        let profileNote = override?.profile != nil ? "profile \(base.name) (daemon.field_profiles \"\(override?.model ?? "")\")"
            : "profile \(base.name) for model \(model.isEmpty ? "(unknown)" : model)"
        let overrideNote = "daemon.field_profiles \"\(override?.model ?? "")\""
        var knowledge = FieldKnowledge(profile: base, idleTimeout: base.appIdleTimeout,
                                       idleTimeoutSource: (override?.idleTimeout != nil ? overrideNote : profileNote) + scaledNote,
                                       idleResetBy: base.idleResetBy, idleResetSource: override?.idleResetBy != nil ? overrideNote : profileNote)
        // What the device was seen to do stands under what the config says of it.
        // (Kept in the device's own seconds: divided by the scale as a profile's are.)
        if let learned {
            if override?.idleTimeout == nil {
                knowledge.idleTimeout = learned.idleTimeout / scale
                knowledge.idleTimeoutSource = "learned: the device closed an idle app after \(((learned.idleTimeout * 10).rounded() / 10).formatted) s" + scaledNote
            }
            if let reset = learned.idleResetBy, override?.idleResetBy == nil {
                knowledge.idleResetBy = reset
                knowledge.idleResetSource = "learned: keep-alives did not keep the app"
            }
        }
        if let entry = settings.idleTimeouts.first(where: { (try? GlobPattern($0.model))?.matches(model) == true }) {
            knowledge.idleTimeout = entry.seconds / scale
            knowledge.idleTimeoutSource = "daemon.idle_timeouts \"\(entry.model)\" for model \(model)" + scaledNote
        }
        if let jobIdleTimeout {
            knowledge.idleTimeout = jobIdleTimeout / scale
            knowledge.idleTimeoutSource = "the job's idle_timeout" + scaledNote
        }
        return knowledge
    }

    /// Records an idle close of `device`'s app and keeps what it teaches; returns it.
    @discardableResult
    package func record(_ observation: IdleCloseObservation, device: CastDevice, now: Int64) -> LearnedIdle {
        // In the device's own seconds (times the scale): a later run at another scale reads them right.
        let path = self.path
        var writeError: String?
        let (learned, scale) = state.withLock { state -> (LearnedIdle, Double) in
            let scale = state.settings.fieldTimeScale
            let measured = IdleCloseObservation(sinceMedia: observation.sinceMedia * scale, sinceLastSend: observation.sinceLastSend * scale,
                                                keepAlives: observation.keepAlives)
            let learned = LearnedIdle.learn(measured, previous: state.learned[device.id], model: device.modelName, now: now)
            state.learned[device.id] = learned
            var devices = JSONObject()
            for id in state.learned.keys.sorted() { devices.set(id, state.learned[id]!.json) }
            let document: JSONValue = ["version": 1, "devices": .object(devices)]
            // Written under the lock: two devices' saves never race for the file.
            if let path {
                do { try SmallFile.replace(path: path, contents: Array((document.serialized() + "\n").utf8), mode: 0o600) } catch {
                    writeError = "\(error)"
                }
            }
            return (learned, scale)
        }
        let resetNote = learned.idleResetBy.map { ", reset only by \($0.rawValue)" } ?? ""
        func tenths(_ seconds: Double) -> String { ((seconds * 10).rounded() / 10).formatted }
        let message = "\(device.friendlyName) closed an idle app after \(tenths(observation.sinceMedia)) s "
            + "(\(observation.keepAlives) keep-alive(s) before): idle timeout \(tenths(learned.idleTimeout / scale)) s\(resetNote)"
        let keepAlives = Int64(observation.keepAlives)
        log.info(message, [
            "device": .string(device.id), "model": .string(device.modelName), "sinceMedia": .double(observation.sinceMedia),
            "sinceLastSend": .double(observation.sinceLastSend), "keepAlives": .int(keepAlives),
            "idleTimeout": .double(learned.idleTimeout / scale), "idleResetBy": .string(learned.idleResetBy?.rawValue ?? ""),
        ])
        if let path, let writeError {
            log.warning("cannot keep what \(device.friendlyName) was seen to do in \(path): \(writeError)", ["path": .string(path)])
        }
        return learned
    }
}
