import CastlineJobs
import CastCore
import CastlineConfig
import CastlineSync
import CastProtocol

/// Video walls (`POST /v1/sync`): the devices named, held to one timeline by a ``VideoWall``
/// that lives as long as the hub (or until replaced or stopped). docs/sync.md.
extension ControlPlane {
    func sync(_ arguments: SyncArguments) async throws(ControlError) -> JSONValue {
        let entries = try await wallDevices(arguments.devices)
        var items: [WallItem] = []
        for url in arguments.media {
            guard let type = arguments.contentType ?? ContentTypeGuess.forPath(url) else {
                throw ControlError.usage("unknown_content_type", "sync: cannot tell the content type of \(url); give content_type (e.g. video/mp4)")
            }
            items.append(WallItem(url: url, contentType: type, title: arguments.title))
        }
        let ids = Set(entries.map(\.device.id))
        for (name, wall) in walls {
            let overlaps = !ids.isDisjoint(with: await wall.deviceIDs)
            guard name == arguments.name || overlaps else { continue }
            await wall.stop("replaced by wall \(arguments.name)")
            walls[name] = nil
        }
        let store = daemon.syncCalibration
        let members: [any WallMember] = entries.map { LinkWallMember(device: $0.device, registry: registry, appID: receiverAppID) }
        let wall = VideoWall(name: arguments.name, members: members, items: items, repeats: arguments.repeats,
                             calibration: store.current, logSystem: logSystem, clock: { MonotonicClock.seconds() },
                             calibrationChanged: { store.save($0) })
        if arguments.calibrate > 0 { return try await calibrate(wall, arguments, ids: ids) }
        let report: VideoWall.StartReport
        do { report = try await wall.start(item: 0, position: arguments.start) } catch {
            throw ControlError(.unavailable, "wall_not_started", "wall \(arguments.name): \(error.message)")
        }
        walls[arguments.name] = wall
        return Self.json(report, wall: arguments.name)
    }

    /// `calibrate` measured starts, each left to settle; then the wall stops and the answer is
    /// what was learned of each TV.
    private func calibrate(_ wall: VideoWall, _ arguments: SyncArguments, ids: Set<String>) async throws(ControlError) -> JSONValue {
        var starts: [JSONValue] = []
        for _ in 0..<arguments.calibrate {
            do {
                let report = try await wall.start(item: 0, position: arguments.start)
                starts.append(Self.json(report, wall: arguments.name))
            } catch {
                await wall.stop("calibration failed")
                throw ControlError(.unavailable, "wall_not_started", "wall \(arguments.name): \(error.message)")
            }
            // Until every TV's first settled readings (which teach its latency) are in: 10 s at most.
            for _ in 0..<50 {
                try? await Task.sleep(nanoseconds: 200_000_000)
                if await wall.measuredSinceStart { break }
            }
        }
        await wall.stop("calibrated")
        let learned = await wall.calibration
        var devices = JSONObject()
        if case .object(let all)? = learned.json["devices"] {
            for (id, value) in all where ids.contains(id) { devices.append(key: id, value: value) }
        }
        return ["wall": .string(arguments.name), "calibrated": .object(devices), "starts": .array(starts)]
    }

    /// The wall's devices: each reference resolved, each glob expanded over the known devices.
    func wallDevices(_ references: [String]) async throws(ControlError) -> [DeviceRegistry.Entry] {
        var found: [DeviceRegistry.Entry] = []
        for reference in references {
            if reference.contains(where: { "*?[".contains($0) }) {
                let selector: DeviceSelector
                do { selector = try DeviceSelector(reference) } catch { throw ControlError.usage("bad_devices", "\(reference): \(error)") }
                let matches = await registry.matching([selector])
                guard !matches.isEmpty else { throw ControlError(.notFound, "no_device", "no known device matches \(reference)") }
                found += matches
            } else {
                found.append(try await registry.resolve(reference))
            }
        }
        var seen = Set<String>()
        return found.filter { seen.insert($0.device.id).inserted }
    }

    /// The running wall named `name` (a sync job's), if any.
    func runningWall(_ name: String) async -> VideoWall? {
        guard let wall = walls[name], await !wall.stopped else { return nil }
        return wall
    }

    /// Devices that join the running wall `name` at its position.
    func join(_ name: String, _ ids: [String]) async {
        guard let wall = walls[name] else { return }
        for id in ids {
            guard let entry = try? await registry.resolve(id) else { continue }
            await wall.add(LinkWallMember(device: entry.device, registry: registry, appID: receiverAppID))
        }
    }

    func listWalls() async -> JSONValue {
        var list: [JSONValue] = []
        for name in walls.keys.sorted() { list.append(await walls[name]!.snapshot()) }
        return ["walls": .array(list)]
    }

    func stopWall(_ name: String) async throws(ControlError) -> JSONValue {
        guard let wall = walls.removeValue(forKey: name) else {
            throw ControlError(.notFound, "unknown_wall", "no wall \"\(name)\"" + (walls.isEmpty ? "" : "; walls: " + walls.keys.sorted().joined(separator: ", ")))
        }
        await wall.stop("stopped by a command")
        return ["walls": .array([await wall.snapshot()])]
    }

    static func json(_ report: VideoWall.StartReport, wall: String) -> JSONValue {
        func ms(_ seconds: Double) -> JSONValue { .double((seconds * 10_000).rounded() / 10) }
        var object = JSONObject()
        object.append(key: "wall", value: .string(wall))
        object.append(key: "startAtUnixNs", value: .int(report.startUnixNanoseconds))
        object.append(key: "startAt", value: .double(Double(report.startUnixNanoseconds) / 1e9))
        object.append(key: "position", value: .double(report.position))
        object.append(key: "item", value: .int(Int64(report.item)))
        object.append(key: "devices", value: .array(report.members.map { member in
            ["device": .string(member.id), "name": .string(member.name), "oneWayMs": ms(member.delay), "floorMs": ms(member.floor),
             "startLatencyMs": ms(member.startLatency), "playSentAtMs": ms(member.sendOffset), "lateMs": ms(member.late),
             "loadMs": ms(member.loadTime)]
        }))
        if !report.missing.isEmpty {
            var missing = JSONObject()
            for (id, why) in report.missing.sorted(by: { $0.key < $1.key }) { missing.append(key: id, value: .string(why)) }
            object.append(key: "missing", value: .object(missing))
        }
        return .object(object)
    }
}
