// castline-sender-bench: N sessions on N simulated devices, each joined or launched and loaded
// until PLAYING. Prints JSON lines: time to all-PLAYING, RSS per session, idle CPU and, with
// --control, how long after a device that was unreachable (a network outage of --down-for
// seconds, app kept) is reachable again its session has resumed.
//
//   castline-sender-bench --targets devices.json --sessions 1000 [--idle 10] [--threads N (default: one per core, at most 4)]
//       [--control SOCKET --outage 20 --down-for 2] [--log RULES (default warning, to stderr)]
//       [--warmup 1 (one session on the last target first, not measured)]
//
// devices.json: the `devices` array of `castline sim`'s ready line ({address, castPort, uuid}).
import CastCore
import CastLogging
import CastProtocol
import CastSender
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct Arguments {
    var targets = ""
    var sessions = 100
    var idle = 10.0
    var threads = SessionManager.defaultThreads
    var control: String?
    var outage = 0
    var downFor = 2.0
    var log = "warning"
    var warmup = false

    init() {
        var it = CommandLine.arguments.dropFirst().makeIterator()
        while let flag = it.next() {
            guard let value = it.next() else { fail("\(flag) needs a value") }
            switch flag {
            case "--targets": targets = value
            case "--sessions": sessions = Int(value) ?? { fail("bad --sessions \(value)") }()
            case "--idle": idle = Double(value) ?? { fail("bad --idle \(value)") }()
            case "--threads": threads = Int(value) ?? { fail("bad --threads \(value)") }()
            case "--control": control = value
            case "--outage": outage = Int(value) ?? { fail("bad --outage \(value)") }()
            case "--log": log = value
            case "--warmup": warmup = value == "1" || value == "true"
            case "--down-for": downFor = Double(value) ?? { fail("bad --down-for \(value)") }()
            default: fail("unknown flag \(flag)")
            }
        }
        if targets.isEmpty { fail("--targets FILE is required") }
    }
}

func writeError(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

func fail(_ message: String) -> Never {
    writeError("castline-sender-bench: \(message)\n")
    exit(2)
}

func emit(_ name: String, _ value: Double, _ unit: String, _ extra: JSONObject = JSONObject()) {
    var object: JSONObject = ["name": .string(name), "value": .double((value * 1000).rounded() / 1000), "unit": .string(unit)]
    for (key, member) in extra { object.set(key, member) }
    let line = JSONValue.object(object).serialized() + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

func readFile(_ path: String) -> String {
    guard let file = fopen(path, "r") else { fail("cannot open \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n == 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// VmRSS in KB.
func rssKB() -> Int {
    for line in readFile("/proc/self/status").split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
}

/// User + system CPU seconds of this process.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// One command to the simulator's control socket; the reply line.
func control(_ path: String, _ command: JSONValue) -> JSONValue? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else { return nil }
    let line = command.serialized() + "\n"
    _ = line.withCString { write(fd, $0, strlen($0)) }
    var reply: [UInt8] = []
    var byte: UInt8 = 0
    while reply.count < 1 << 20, read(fd, &byte, 1) == 1 {
        if byte == UInt8(ascii: "\n") { break }
        reply.append(byte)
    }
    return try? JSONValue.parse(String(decoding: reply, as: UTF8.self))
}

/// Records when each session suspended and resumed (monotonic seconds).
final class ResumeClock: CastSessionListener {
    let resumed = Mutex<[Int: Double]>([:])
    func session(_ session: CastSession, didResumeOn device: CastDevice, transferred: Bool) {
        let now = MonotonicClock.seconds()
        resumed.withLock { $0[session.localID] = now }
    }
}

let arguments = Arguments()
var limit = rlimit()
getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)

guard case .array(let listed)? = try? JSONValue.parse(readFile(arguments.targets)) else { fail("\(arguments.targets): not a JSON array") }
let devices = listed.prefix(arguments.sessions).enumerated().map { index, entry in
    CastDevice(id: entry["uuid"]?.string ?? "device-\(index)", friendlyName: "sim \(index)",
               host: entry["address"]?.string ?? "127.0.0.1", port: Int(entry["castPort"]?.int ?? 8009))
}
guard devices.count == arguments.sessions else { fail("only \(devices.count) targets for \(arguments.sessions) sessions") }

let logSystem: LogSystem
do { logSystem = LogSystem(filter: try LoggerFilter(parsing: arguments.log)) } catch { fail("--log: \(error)") }
logSystem.addSink(ConsoleLogSink())
var options = CastOptions()
options.logSystem = logSystem
options.requestTimeout = 30
options.connectTimeout = 30
let manager = SessionManager(options: options, threads: arguments.threads)
let clock = ResumeClock()
manager.addListener(clock)
let media = try! MediaInformationBuilder(contentURL: "https://media.example/castline/bench.mp4").contentType("video/mp4")
    .generic(title: "castline bench").build()

// Warm-up (the same for pychromecast-sessions.py): one session on the last target, loaded and
// stopped, so one-time costs (threads, TLS library, runtime metadata) are not in the figures.
if arguments.warmup, case .object(let entry)? = listed.last {
    let device = CastDevice(id: entry["uuid"]?.string ?? "warmup", friendlyName: "warm-up",
                            host: entry["address"]?.string ?? "127.0.0.1", port: Int(entry["castPort"]?.int ?? 8009))
    if let session = try? await manager.startSession(on: device) {
        _ = await session.remoteMediaClient.load(media).result
        await session.end(stopCasting: true)
    }
}

let baseline = rssKB()
let cpuAtStart = cpuSeconds()
let started = MonotonicClock.seconds()
let failures = Atomic<Int>(0)
// Sessions in device order (index i is on device i: the outage below relies on it).
let sessionByDevice: [Int: CastSession] = await withTaskGroup(of: (Int, CastSession?).self) { group in
    for (index, device) in devices.enumerated() {
        group.addTask {
            do {
                let session = try await manager.startSession(on: device)
                let client = session.remoteMediaClient
                let updates = client.statusUpdates()
                _ = await client.load(media).result
                if client.mediaStatus?.playerState != .playing {
                    for await status in updates where status?.playerState == .playing { break }
                }
                return (index, session)
            } catch {
                failures.add(1, ordering: .relaxed)
                writeError("session on \(device) failed: \(error)\n")
                return (index, nil)
            }
        }
    }
    var byIndex: [Int: CastSession] = [:]
    for await (index, session) in group { if let session { byIndex[index] = session } }
    return byIndex
}
let sessions = sessionByDevice.sorted { $0.key < $1.key }.map(\.value)
let allPlaying = MonotonicClock.seconds() - started
emit("sender.all_playing", allPlaying, "s", ["sessions": .int(Int64(sessions.count)), "failed": .int(Int64(failures.load(ordering: .relaxed))),
                                              "threads": .int(Int64(arguments.threads)),
                                              "cpu_seconds": .double(((cpuSeconds() - cpuAtStart) * 1000).rounded() / 1000),
                                              // CLOCK_MONOTONIC: `perf record -k CLOCK_MONOTONIC` then `perf report --time START,END`.
                                              "window_monotonic": .array([.double(started), .double(started + allPlaying)])])

try? await Task.sleep(for: .seconds(2))
let after = rssKB()
emit("sender.rss_per_session", Double(after - baseline) / Double(max(1, sessions.count)), "KB",
     ["rss_total_kb": .int(Int64(after)), "rss_baseline_kb": .int(Int64(baseline))])

let cpuBefore = cpuSeconds()
let idleStart = MonotonicClock.seconds()
try? await Task.sleep(for: .seconds(arguments.idle))
let idleWall = MonotonicClock.seconds() - idleStart
let idleCPU = cpuSeconds() - cpuBefore
emit("sender.idle_cpu", 100 * idleCPU / idleWall, "% of one core", ["seconds": .double(idleWall), "cpu_seconds": .double(idleCPU)])

if let socket = arguments.control, arguments.outage > 0 {
    let count = min(arguments.outage, sessions.count)
    var upAt: [Int: Double] = [:]
    for index in 0..<count {
        guard let reply = control(socket, ["command": "outage", "device": .int(Int64(index)), "downFor": .double(arguments.downFor)]),
              reply["ok"] == true else { fail("outage of device \(index) failed") }
        upAt[index] = MonotonicClock.seconds() + arguments.downFor
    }
    let deadline = MonotonicClock.seconds() + arguments.downFor + 30
    var latencies: [Double] = []
    while MonotonicClock.seconds() < deadline {
        let resumed = clock.resumed.withLock { $0 }
        latencies = (0..<count).compactMap { index in
            sessionByDevice[index].flatMap { resumed[$0.localID] }.map { $0 - upAt[index]! }
        }
        if latencies.count == count { break }
        try? await Task.sleep(for: .milliseconds(20))
    }
    latencies.sort()
    emit("sender.reconnect_after_reachable.max", latencies.last ?? -1, "s", [
        "resumed": .int(Int64(latencies.count)), "unreachable": .int(Int64(count)), "down_for": .double(arguments.downFor),
        "p50": .double(latencies.isEmpty ? -1 : latencies[latencies.count / 2]),
    ])
}
await manager.shutdown(stopCasting: true)
