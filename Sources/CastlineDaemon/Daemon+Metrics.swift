import CastCore
import CastLogging
import CastProtocol

/// `GET /metrics`: the hub's state in the Prometheus text format.
extension Daemon {
    package func metricsText() async -> String {
        var links: [String: Int] = ["connected": 0, "connecting": 0, "reconnecting": 0, "closed": 0, "lost": 0]
        var owners: [String: Int] = [:]
        for entry in await registry.all {
            let state: String
            if entry.link != nil { state = entry.view.state.map(DeviceRegistry.linkName) ?? "connecting" } else { state = entry.present ? "connecting" : "lost" }
            links[state, default: 0] += 1
            if let owner = entry.owner { owners[owner, default: 0] += 1 }
        }
        var jobs: [(labels: [(String, String)], value: Double)] = []
        for name in drivers.keys.sorted() {
            var counts: [String: Int] = [:]
            for entry in await drivers[name]!.summary { counts[entry.state.description, default: 0] += 1 }
            for state in counts.keys.sorted() { jobs.append(([("job", name), ("state", state)], Double(counts[state]!))) }
        }
        let sinks = logSystem.sinkStatistics
        let heap = ProcessMemory.heap
        let served = media.figures
        let plugins = pluginChannels.plugins?.states() ?? []
        let perDevice = await deviceSeries()
        let gauges = [
            HubMetrics.Gauge("castline_sessions", "Devices by the state of castline's session with them.",
                             links.keys.sorted().map { ([("state", $0)], Double(links[$0]!)) }),
            HubMetrics.Gauge("castline_casts", "Devices playing a cast castline made, by owner (a job, or command).",
                             owners.keys.sorted().map { ([("owner", $0)], Double(owners[$0]!)) }),
            HubMetrics.Gauge("castline_job_devices", "Devices of each job, by the job's state there.", jobs),
            HubMetrics.Gauge("castline_event_subscribers", "Clients following GET /v1/events.", [([], Double(events.subscriberCount))]),
            HubMetrics.Gauge("castline_log_queue_records", "Records waiting in each log sink's queue.",
                             sinks.map { ([("sink", $0.name)], Double($0.queued)) }),
            HubMetrics.Gauge("castline_heap_bytes", "What malloc holds: bytes in use by live objects, and bytes free inside its arenas.",
                             [([("state", "in_use")], Double(heap.inUse)), ([("state", "free")], Double(heap.free))]),
            HubMetrics.Gauge("castline_heap_mapped_bytes", "Of the heap in use, bytes in blocks malloc mapped on their own (those at or above its mmap threshold: 16 KiB under castline run unless the environment sets one; each connection's TLS buffers).",
                             [([], Double(heap.mapped))]),
            HubMetrics.Gauge("castline_heap_mapped_blocks", "Blocks malloc mapped on their own.", [([], Double(heap.mappedBlocks))]),
            HubMetrics.Gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
                             ProcessMemory.residentBytes.map { [([], Double($0))] } ?? []),
            HubMetrics.Gauge("process_open_fds", "Number of open file descriptors.",
                             ProcessMemory.openDescriptors.map { [([], Double($0))] } ?? []),
            HubMetrics.Gauge("castline_plugin_state", "Each loaded plugin's state: 1 for the one it is in (loaded in castline's process, isolated in its helper, restarting, disabled).",
                             plugins.flatMap { plugin in
                                 ["loaded", "isolated", "restarting", "disabled"].map { ([("plugin", plugin.id), ("state", $0)], plugin.state == $0 ? 1.0 : 0.0) }
                             }),
            HubMetrics.Gauge("castline_media_published_files", "Local files published now, each for the one device it was cast to.",
                             [([], Double(served.published))]),
            HubMetrics.Gauge("castline_media_connections", "Open connections to the media server.", [([], Double(served.connections))]),
            HubMetrics.Gauge("castline_uptime_seconds", "Seconds since castline run started.",
                             [([], ((MonotonicClock.seconds() - startedAt) * 1000).rounded() / 1000)]),
        ]
        let counters = [
            HubMetrics.Gauge("castline_log_records_dropped_total", "Log records each sink dropped because its queue was full.",
                             sinks.map { ([("sink", $0.name)], Double($0.dropped)) }),
            HubMetrics.Gauge("castline_log_records_delivered_total", "Log records each sink received.",
                             sinks.map { ([("sink", $0.name)], Double($0.delivered)) }),
            HubMetrics.Gauge("castline_plugin_restarts_total", "Restarts of each isolated plugin's helper process (after a crash, a hang or a limit).",
                             plugins.map { ([("plugin", $0.id)], Double($0.restarts)) }),
            HubMetrics.Gauge("castline_media_refused_total",
                             "Media server refusals: connections over the total or per-address bound, connections closed for bringing no whole request in time, requests from an address a file was not published for.",
                             [([("reason", "connections")], Double(served.refusals.connections)),
                              ([("reason", "connections_per_peer")], Double(served.refusals.connectionsPerPeer)),
                              ([("reason", "request_timeout")], Double(served.refusals.idle)),
                              ([("reason", "wrong_peer")], Double(served.refusals.peer))]),
        ]
        return metrics.render(gauges: gauges + perDevice.gauges, counters: counters + perDevice.counters)
    }
}
