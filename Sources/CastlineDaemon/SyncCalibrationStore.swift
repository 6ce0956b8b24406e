import CastCore
import CastLogging
import CastlineSync
import Synchronization

/// Where the walls' learned start latencies are kept (`sync-calibration.json` beside the jobs
/// file; nil path: in memory). Read once, written atomically after each change.
package final class SyncCalibrationStore: Sendable {
    let path: String?
    let state: Mutex<SyncCalibration>
    let log: Logger

    package init(path: String?, logSystem: LogSystem) {
        self.path = path
        log = Logger(class: "SyncCalibrationStore", system: logSystem)
        var calibration = SyncCalibration()
        if let path {
            do {
                if let bytes = try SmallFile.read(path: path, limit: 1 << 20) {
                    calibration = SyncCalibration(json: try JSONValue.parse(String(decoding: bytes, as: UTF8.self)))
                }
            } catch {
                log.warning("cannot read the wall calibration from \(path): \(error); starting afresh", ["path": .string(path)])
            }
        }
        state = Mutex(calibration)
    }

    package var current: SyncCalibration { state.withLock { $0 } }

    package func save(_ calibration: SyncCalibration) {
        state.withLock { $0 = calibration }
        guard let path else { return }
        do { try SmallFile.replace(path: path, contents: Array((calibration.json.serialized() + "\n").utf8), mode: 0o600) } catch {
            log.warning("cannot keep the wall calibration in \(path): \(error)", ["path": .string(path)])
        }
    }
}
