import CastCore
import CastSender
import CastTestSupport
import Foundation
import Testing

/// castline's LAUNCH and LOAD carry the keys pychromecast's carry for the same media: both cast
/// to one simulator with a frame log, and the key paths of what each sent are compared.
@Suite("LAUNCH and LOAD keys versus pychromecast", .timeLimit(.minutes(1)))
struct PychromecastParityTests {
    static let url = "https://media.example/castline/parity.mp4"
    static let thumb = "https://media.example/castline/parity.jpg"

    /// Keys only pychromecast sends, and why castline does not: `metadata.thumb` is not part of
    /// the Cast MediaMetadata schema (pychromecast duplicates the image URL there);
    /// `customData: {}` is an empty placeholder. The test fails if this list changes either way.
    static let pychromecastOnly: Set<String> = ["customData", "media.metadata.thumb"]

    /// Every key path of a JSON value: `a`, `a.b`, arrays as `a[]`.
    static func keyPaths(_ value: JSONValue, prefix: String = "") -> Set<String> {
        switch value {
        case .object(let object):
            var paths = Set<String>()
            for (key, member) in object {
                let path = prefix.isEmpty ? key : prefix + "." + key
                paths.insert(path)
                paths.formUnion(keyPaths(member, prefix: path))
            }
            return paths
        case .array(let items):
            return items.reduce(into: Set<String>()) { $0.formUnion(keyPaths($1, prefix: prefix + "[]")) }
        default:
            return []
        }
    }

    /// Payloads of inbound frames of `type` in `lines` (the frame log).
    static func sent(_ type: String, in lines: ArraySlice<String>) -> [JSONValue] {
        lines.compactMap { try? JSONValue.parse($0) }
            .filter { $0["direction"]?.string == "in" && $0["type"]?.string == type }
            .compactMap { $0["payload"] }
    }

    @Test("same key paths in LAUNCH and LOAD (pychromecast-only extras listed and explained)")
    func parity() async throws {
        let python = FileManager.default.currentDirectoryPath + "/.venv/bin/python"
        try #require(FileManager.default.isExecutableFile(atPath: python), "pychromecast's venv is missing: run `make deps`")
        let framePath = "/tmp/castline-parity-\(UInt32.random(in: 0...UInt32.max)).jsonl"
        defer { try? FileManager.default.removeItem(atPath: framePath) }
        try await withSenderRig(settings: { $0.frameLogPath = framePath }) { rig in
            let device = rig.simulator.devices[0].configuration

            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = ["Tests/Conformance/clients/pychromecast_load.py", device.address, "\(device.castPort)",
                                 formattedUUID(device.uuid), Self.url, "video/mp4", "Parity", Self.thumb]
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // Drain both pipes while it runs (a full pipe would block it).
            async let printed = Task.detached { String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }.value
            async let complaints = Task.detached { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }.value
            let finished = await waitForExit(process, timeout: 60)
            let (stdout, stderr) = await (printed, complaints)
            try #require(finished && process.terminationStatus == 0,
                         "pychromecast failed (exit \(process.terminationStatus)): \(stdout) \(stderr.suffix(2000))")
            let pychromecastLines = try String(contentsOfFile: framePath, encoding: .utf8).split(separator: "\n").map(String.init)
            try await rig.control(["command": "stop-app", "device": 0])

            let manager = rig.manager()
            let session = try await manager.startSession(on: rig.device())
            let media = try MediaInformationBuilder(contentID: Self.url).contentType("video/mp4").generic(title: "Parity")
                .image(Self.thumb).build()
            _ = try await session.remoteMediaClient.load(media).value()
            await manager.endAll(stopCasting: true)
            let allLines = try String(contentsOfFile: framePath, encoding: .utf8).split(separator: "\n").map(String.init)
            let castlineLines = allLines[pychromecastLines.count...]

            for type in ["LAUNCH", "LOAD"] {
                let theirs = try #require(Self.sent(type, in: pychromecastLines[...]).first, "pychromecast sent no \(type)")
                let ours = try #require(Self.sent(type, in: castlineLines).first, "castline sent no \(type)")
                let theirKeys = Self.keyPaths(theirs), ourKeys = Self.keyPaths(ours)
                #expect(ourKeys.subtracting(theirKeys).isEmpty, "\(type): castline-only keys \(ourKeys.subtracting(theirKeys).sorted())")
                let missing = theirKeys.subtracting(ourKeys)
                #expect(missing == (type == "LOAD" ? Self.pychromecastOnly : []),
                        "\(type): pychromecast-only keys \(missing.sorted()); theirs \(theirs.serialized()) ours \(ours.serialized())")
            }
        }
    }
}

/// 32 hex digits → 8-4-4-4-12.
func formattedUUID(_ hex: String) -> String {
    let c = Array(hex)
    guard c.count == 32 else { return hex }
    return [c[0..<8], c[8..<12], c[12..<16], c[16..<20], c[20..<32]].map { String($0) }.joined(separator: "-")
}

/// Waits (bounded) for `process` to exit; kills it after `timeout` seconds.
func waitForExit(_ process: Process, timeout: Double) async -> Bool {
    if await !pollUntil(timeout: timeout, every: .milliseconds(20), { !process.isRunning }) {
        process.terminate()
        process.waitUntilExit()
        return false
    }
    return true
}
