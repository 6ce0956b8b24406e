import CastCore
import CastLogging

/// The route table's rows for the hub itself: status, devices, plugins, jobs, events, logging
/// and metrics.
extension ControlRoute {
    static let status = [
        ControlRoute(.status, .GET, "/v1", name: "status", operationID: "getStatus", summary: "The daemon's version, uptime and counts.",
                     responses: [("200", "Status")]) { _ throws(ControlError) in .command(.status) },
        ControlRoute(.status, .GET, "/v1/status", name: "status", operationID: "getStatusAlias", summary: "The same as GET /v1.",
                     responses: [("200", "Status")]) { _ throws(ControlError) in .command(.status) },
    ]

    static let listDevices = ControlRoute(
        .listDevices, .GET, "/v1/devices", name: "devices", operationID: "listDevices", summary: "Every known device, idle ones included.",
        responses: [("200", "Devices")]) { _ throws(ControlError) in .command(.listDevices) }

    static let showDevice = ControlRoute(
        .showDevice, .GET, "/v1/devices/{device}", name: "device", operationID: "getDevice", summary: "One device, with its full media status.",
        responses: [("200", "Device")]) { r throws(ControlError) in .command(.showDevice(r["device"])) }

    static let listPlugins = ControlRoute(
        .listPlugins, .GET, "/v1/plugins", name: "plugins", operationID: "listPlugins", summary: "Every loaded plugin and its state.",
        description: """
            `loaded` (in castline's process), `isolated` (in its helper process), `restarting` (its helper is
            down and being restarted; its channels' namespaces answer 503 `plugin_unavailable` meanwhile) or
            `disabled` (a callback overran plugins.call_timeout; SIGHUP retries), with why and how many restarts.
            """,
        responses: [("200", "Plugins")]) { _ throws(ControlError) in .command(.listPlugins) }

    static let listJobs = ControlRoute(
        .listJobs, .GET, "/v1/jobs", name: "jobs", operationID: "listJobs",
        summary: "Every job (the config's and those added here) with its state on each device.",
        responses: [("200", "Jobs")]) { _ throws(ControlError) in .command(.listJobs) }

    static let showJob = ControlRoute(
        .showJob, .GET, "/v1/jobs/{name}", name: "jobs", operationID: "getJob", summary: "One job.",
        responses: [("200", "Job")]) { r throws(ControlError) in .command(.showJob(r["name"])) }

    static let putJob = ControlRoute(
        .putJob, .PUT, "/v1/jobs/{name}", name: "job put", operationID: "putJob",
        summary: "Add or replace a job (desired state, kept in the jobs file across restarts).",
        description: "The body is a job as in the config file (checked the same way, errors with their position). A job of the config file cannot be changed here (409).",
        body: .document(schema: "Job", required: true), responses: [("200", "JobReplaced"), ("201", "JobAdded")]
    ) { r throws(ControlError) in
        guard !r.body.isEmpty else { throw ControlError.usage("missing_job", "PUT a job: {\"devices\": [...], \"media\": {...}}") }
        return .command(.putJob(r["name"], String(decoding: r.body, as: UTF8.self)))
    }

    static let deleteJob = ControlRoute(
        .deleteJob, .DELETE, "/v1/jobs/{name}", name: "job delete", operationID: "deleteJob",
        summary: "Remove a job; its cast stops unless daemon.on_job_removed is leave.",
        responses: [("200", "JobDeleted")]) { r throws(ControlError) in .command(.deleteJob(r["name"])) }

    static let runJob = ControlRoute(
        .runJob, .POST, "/v1/jobs/{name}/run", name: "job run", operationID: "runJob",
        summary: "Play an announce job's announcement now on every device it matches; each is restored afterwards.",
        description: "Only announce jobs run (409 job_not_runnable for a job that keeps media playing; 409 no_device when it matches no known device). With wait false, answers once the run is under way.",
        body: .object(RouteObject([RouteField("wait", "type: boolean, default: true", "Answer once every device is restored.")], required: false)),
        responses: [("200", "JobRun")]
    ) { r throws(ControlError) in .command(.runJob(r["name"], wait: try r.arguments(what: "run").bool("wait") ?? true)) }

    static let events = ControlRoute(
        .events, .GET, "/v1/events", name: "events", operationID: "events",
        summary: "Session, job, device, media, channel and logging events as server-sent events.",
        description: """
            Each event is `id: <seq>`, `event: <kind>` and `data: <JSON>` with `seq`, `time` (Unix seconds),
            `kind`, `type`, `device` and `job` when they apply, and the event's fields. A client that does not
            keep up loses its oldest events; the next one it gets carries `"lost": N`. A comment every 15 s
            keeps idle connections open.
            """,
        query: [RouteField("kinds", #"type: string, example: "media,session""#, "Comma-separated kinds to receive (default all).")],
        responses: [("200", "Events")]) { r throws(ControlError) in .events(try HubEvents.kinds(r.query["kinds"])) }

    static let showLogging = ControlRoute(
        .showLogging, .GET, "/v1/logging", name: "logging", operationID: "getLogging",
        summary: "The log rules in force, their layers and each sink's counts.",
        responses: [("200", "Logging")]) { _ throws(ControlError) in .command(.showLogging) }

    static let setLogging = ControlRoute(
        .setLogging, .PUT, "/v1/logging", name: "logging", operationID: "putLogging",
        summary: "Set the API's layer of log rules (the CASTLINE_LOG grammar), or remove it with null.",
        body: .object(RouteObject([
            RouteField("rules", #"type: string, nullable: true, example: "info,CastSession:debug""#, required: true, nullable: true,
                       "Rules such as info,CastSession:debug; null removes the API's layer."),
        ], required: true)),
        responses: [("200", "LoggingNow")]
    ) { r throws(ControlError) in .command(try ControlCommand.setLogging(body: r.json())) }

    static let explainLogging = ControlRoute(
        .explainLogging, .GET, "/v1/logging/explain", name: "logging", operationID: "explainLogging",
        summary: "Which rule decides a class's level, and from which layer (castline logs explain).",
        query: [RouteField("class", "type: string, minLength: 1, example: CastSession", required: true),
                RouteField("function", "type: string")],
        responses: [("200", "Explanation")]
    ) { r throws(ControlError) in
        guard let className = r.query["class"], !className.isEmpty else {
            throw ControlError.usage("missing_class", "explain needs ?class=CLASS (and &function=F)")
        }
        return .command(.explainLogging(className: className, function: r.query["function"] ?? ""))
    }

    static let metrics = ControlRoute(
        .metrics, .GET, "/metrics", name: "metrics", operationID: "metrics", summary: "Prometheus text format.",
        responses: [("200", "Metrics")]) { _ throws(ControlError) in .metrics }
}

extension HubEvents {
    /// The kinds a `kinds` query names (comma-separated); nil (every kind) when it names none.
    package static func kinds(_ text: String?) throws(ControlError) -> Set<Kind>? {
        guard let text, !text.isEmpty else { return nil }
        var kinds = Set<Kind>()
        for name in text.split(separator: ",") {
            guard let kind = Kind(rawValue: String(name)) else {
                throw ControlError.usage("bad_kind", "events: unknown kind \"\(name)\" (\(Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            kinds.insert(kind)
        }
        return kinds
    }
}
