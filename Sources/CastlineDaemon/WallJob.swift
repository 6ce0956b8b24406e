import CastlineJobs
import CastCore
import CastLogging
import CastProtocol
import CastlineConfig

/// A job with `sync: true`: its devices as one video wall (``ControlPlane/sync(_:)``). The wall
/// starts once every matching device is connected (or 10 s after the first one is), starts again
/// after it ended or failed (`retry_delay`, doubling up to 16×), and a device that connects later
/// joins it at its position. The playlist repeats: a job keeps its media playing.
actor WallJob {
    let job: JobEntry
    let registry: DeviceRegistry
    let log: Logger
    /// How long a wall waits for the job's other devices before it starts without them.
    static let gatherSeconds = 10.0
    var firstConnected: Double?
    var failures = 0
    var nextTry = 0.0
    var lastError: String?
    var starts = 0

    init(job: JobEntry, registry: DeviceRegistry, logSystem: LogSystem) {
        self.job = job
        self.registry = registry
        log = Logger(class: "WallJob", system: logSystem).with(["job": .string(job.name)])
    }

    /// One look (every second, from the daemon's tick).
    func tick(plane: ControlPlane?, now: Double = MonotonicClock.seconds()) async {
        guard let plane, now >= nextTry else { return }
        let selectors = job.devices.compactMap { try? DeviceSelector($0) }
        let matched = await registry.matching(selectors)
        let connected = matched.map(\.device.id).filter { registry.connectedIDs.contains($0) }
        guard !connected.isEmpty else { return }
        if let wall = await plane.runningWall(job.name) {
            let members = Set(await wall.deviceIDs)
            let late = connected.filter { !members.contains($0) }
            if !late.isEmpty { await plane.join(job.name, late) }
            return
        }
        if firstConnected == nil { firstConnected = now }
        if connected.count < matched.count, now - firstConnected! < Self.gatherSeconds { return }
        var arguments = SyncArguments(devices: connected, media: job.media.items ?? [job.media.url], name: job.name)
        arguments.contentType = job.media.contentType
        arguments.title = job.media.title
        arguments.repeats = true
        switch await plane.execute(.sync(arguments)) {
        case .success:
            starts += 1
            failures = 0
            lastError = nil
        case .failure(let error):
            failures += 1
            lastError = error.message
            let wait = JobStateMachine(job: job, keepAlive: false).backoff(after: failures)
            nextTry = now + wait
            log.warning("the wall did not start (\(error.message)); again in \(wait) s", ["error": .string(error.code), "failures": .int(Int64(failures))])
        }
    }

    /// The job's view: its wall (phases, errors) when one runs.
    func json(plane: ControlPlane?) async -> JSONValue {
        var object: JSONObject = ["starts": .int(Int64(starts))]
        if let lastError { object.set("error", .string(lastError)) }
        if let plane, let wall = await plane.runningWall(job.name) { object.set("wall", await wall.snapshot()) }
        return .object(object)
    }

    /// Stops holding the wall together; with `stopCasting`, its TVs stop too.
    func stop(plane: ControlPlane?, stopCasting: Bool) async {
        guard let plane else { return }
        let ids = await plane.runningWall(job.name)?.deviceIDs ?? []
        _ = await plane.execute(.stopWall(job.name))
        guard stopCasting else { return }
        for id in ids { _ = await plane.execute(.stop(id, app: false)) }
    }
}
