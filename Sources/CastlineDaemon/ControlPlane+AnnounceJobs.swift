import CastCore
import CastLogging

/// Announce jobs run on demand (`POST /v1/jobs/{name}/run`, `castline jobs run`) and at their
/// `at:` times (the job's driver asks the daemon, which asks here): the same announcement on
/// every device the job matches, at once, each device restored on its own.
extension ControlPlane {
    func runJob(_ name: String, wait: Bool) async throws(ControlError) -> JSONValue {
        guard let driver = await daemon.driver(named: name) else { throw ControlError(.notFound, "unknown_job", "no job \"\(name)\"") }
        guard let announcement = driver.job.announcement else {
            throw ControlError(.conflict, "job_not_runnable",
                               "job \"\(name)\" keeps media playing on its devices; only announce jobs (announce:) run on demand")
        }
        let targets = await registry.all.filter { driver.matches($0.device, aliases: $0.aliases) }
        guard !targets.isEmpty else {
            throw ControlError(.conflict, "no_device", "job \"\(name)\" matches no device the hub knows (devices: \(driver.job.devices.joined(separator: ", ")))")
        }
        var arguments = AnnounceArguments(media: announcement.media)
        arguments.volume = announcement.volume
        arguments.contentType = announcement.contentType
        arguments.timeout = announcement.timeout
        arguments.localMedia = await daemon.mediaPolicy(forJob: name)
        if !wait {
            Task { _ = await self.execute(.runJob(name, wait: true)) }
            return ["job": .string(name), "announcement": .string(announcement.media), "devices": .int(Int64(targets.count)), "announcing": true]
        }
        let startedAt = await driver.now()
        log.info("job \(name): announcing \(announcement.media) on \(targets.count) device(s)", ["job": .string(name), "devices": .int(Int64(targets.count))])
        let ids = targets.map(\.device.id)
        let command = arguments
        let results = await withTaskGroup(of: (Int, Result<JSONValue, ControlError>).self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask { (index, await self.execute(.announce(id, command))) }
            }
            var results: [(Int, Result<JSONValue, ControlError>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var restored = 0, failed = 0
        var answers: [JSONValue] = []
        for (target, result) in zip(targets, results) {
            switch result {
            case .success(let answer):
                if answer["restored"] == .bool(true) { restored += 1 }
                answers.append(answer)
            case .failure(let error):
                failed += 1
                answers.append(["device": .string(target.device.friendlyName), "id": .string(target.device.id),
                                "announcement": .string(announcement.media), "error": .string(error.message), "code": .string(error.code)])
            }
        }
        let answer: JSONValue = ["job": .string(name), "announcement": .string(announcement.media), "devices": .array(answers),
                                 "restored": .int(Int64(restored)), "failed": .int(Int64(failed))]
        log.info("job \(name): \(restored) of \(targets.count) device(s) restored, \(failed) failed",
                 ["job": .string(name), "restored": .int(Int64(restored)), "failed": .int(Int64(failed))])
        await driver.recordRun(answer, startedAt: startedAt)
        return answer
    }
}
