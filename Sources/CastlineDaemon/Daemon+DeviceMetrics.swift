import CastCore
import CastlineConfig
#if canImport(Glibc)
import Glibc
#endif

/// `/metrics`' per-device series (docs/api.md, "Metrics"): one set per device the hub knows,
/// labelled by its name, id, model and this agent, so an operator can alert on one TV.
extension Daemon {
    /// Gauges and counters, in the order `metricsText` renders them.
    func deviceSeries() async -> (gauges: [HubMetrics.Gauge], counters: [HubMetrics.Gauge]) {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        let now = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
        let agent = config.mqtt?.agent ?? MQTTSettings.defaultAgent()
        let announceJobs = Set(allJobs.filter { $0.announcement != nil }.map(\.name))
        let present = Dictionary(await registry.all.map { ($0.device.id, $0.present) }, uniquingKeysWith: { a, _ in a })
        var shown: [String: [(job: String, playing: Bool)]] = [:]
        for name in drivers.keys.sorted() where !announceJobs.contains(name) {
            for entry in await drivers[name]!.summary { shown[entry.id, default: []].append((name, entry.state == .playing)) }
        }
        typealias Values = [(labels: [(String, String)], value: Double)]
        var up: Values = [], reachable: Values = [], app: Values = [], media: Values = [], owner: Values = [], content: Values = []
        var seen: Values = [], reconnects: Values = [], launches: Values = [], screen: Values = []
        for device in await registry.listing() {
            guard let id = device["id"]?.string else { continue }
            let labels = [("device", device["device"]?.string ?? id), ("id", id), ("model", device["model"]?.string ?? ""), ("agent", agent)]
            let connected = device["link"]?.string == "connected"
            if connected { deviceMetrics.seen(id, at: now) }
            let counts = deviceMetrics.counts(id)
            up.append((labels, connected ? 1 : 0))
            reachable.append((labels, present[id] == true ? 1 : 0))
            let appRunning = device["app"] != nil
            app.append((labels, appRunning ? 1 : 0))
            let state = device["state"]?.string ?? "NO_APP"
            for s in DeviceMetrics.mediaStates { media.append((labels + [("state", s)], state == s ? 1 : 0)) }
            // The registry's own model of who owns the screen, as every other view has it.
            let kind = device["ownerKind"]?.string ?? ScreenOwner.Kind.unknown.rawValue
            for k in DeviceMetrics.ownerKinds { owner.append((labels + [("owner", k)], kind == k ? 1 : 0)) }
            if let reading = device["screen"] {
                let now = reading["visible"]?.bool == true ? "visible" : reading["reason"]?.string ?? "unknown"
                for s in DeviceMetrics.screenStates { screen.append((labels + [("screen", s)], now == s ? 1 : 0)) }
            }
            for entry in shown[id] ?? [] { content.append((labels + [("job", entry.job)], entry.playing ? 1 : 0)) }
            if let last = counts.lastSeen { seen.append((labels, (last * 1000).rounded() / 1000)) }
            reconnects.append((labels, Double(counts.reconnects)))
            for reason in counts.launches.keys.sorted() { launches.append((labels + [("reason", reason)], Double(counts.launches[reason]!))) }
        }
        let gauges = [
            HubMetrics.Gauge("castline_device_up", "1 while castline's session with the device is connected.", up),
            HubMetrics.Gauge("castline_device_reachable", "1 while discovery lists the device (found by mDNS, a plugin or a static host's probe).", reachable),
            HubMetrics.Gauge("castline_device_app_running", "1 while an app (other than the idle screen) runs on the device.", app),
            HubMetrics.Gauge("castline_device_media_state", "1 for the device's state now (NO_APP, NO_MEDIA, IDLE, LOADING, BUFFERING, PLAYING, PAUSED, PAGE: a page castline sent, UNKNOWN: cannot be reached), 0 for the others.", media),
            HubMetrics.Gauge("castline_device_owner", "1 for who owns the device's screen (job, command, announcement, other: an app castline did not start, nobody, unknown: the device cannot be reached), 0 for the others.", owner),
            HubMetrics.Gauge("castline_device_screen", "1 for what the device's screen shows now (visible: the app; covered: ambient mode, by the model's profile; standby; other-input; idle-screen: no app; unknown: the device does not say), 0 for the others. Devices with a screen only.", screen),
            HubMetrics.Gauge("castline_device_job_content_shown", "1 while the device shows its job's content (the job's machine is playing there), 0 while the job is casting, yielding, backing off or waiting.", content),
            HubMetrics.Gauge("castline_device_last_seen_timestamp_seconds", "Unix time castline last heard from the device (an event from it, or a scrape that found its session connected).", seen),
        ]
        let counters = [
            HubMetrics.Gauge("castline_device_reconnects_total", "Times the device's session was suspended and resumed.", reconnects),
            HubMetrics.Gauge("castline_device_launches_total", "Job casts started on the device, by their cause (first, device-back, app-closed, media-ended, retry, launch-cancelled, screen-off, content-changed, hand-back, other-sender-done, reclaim).", launches),
        ]
        return (gauges, counters)
    }
}
