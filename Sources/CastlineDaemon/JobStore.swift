import CastCore
import CastLogging
import CastlineConfig
#if canImport(Glibc)
import Glibc
#endif

/// The jobs added through the API: desired state kept in one JSON file
/// (`{"version": 1, "jobs": [...]}`, the config's job keys), written atomically on every change
/// so they survive a restart. A job in the file that no longer passes the checks is logged with
/// its position and left out; the others load.
package struct JobStore: Sendable {
    package let path: String
    let log: Logger

    package init(path: String, logSystem: LogSystem) {
        self.path = path
        log = Logger(class: "JobStore", system: logSystem)
    }

    /// The saved jobs (none when the file does not exist yet).
    package func load() -> [JobEntry] {
        let bytes: [UInt8]
        do {
            guard let read = try SmallFile.read(path: path, limit: 16 << 20) else { return [] }
            bytes = read
        } catch {
            log.error("cannot read the jobs file: \(error); starting without API jobs", ["path": .string(path)])
            return []
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let root = try? JSONValue.parse(text), let list = root["jobs"]?.array else {
            log.error("the jobs file is not {\"version\": 1, \"jobs\": [...]}; starting without API jobs", ["path": .string(path)])
            return []
        }
        var jobs: [JobEntry] = []
        for (index, item) in list.enumerated() {
            do {
                jobs.append(try JobEntry.parse(item.serialized(), source: "\(path) jobs[\(index)]"))
            } catch {
                log.error("jobs file: job \(index) left out: \(error)", ["path": .string(path)])
            }
        }
        return jobs
    }

    /// Replaces the file with `jobs` (mode 0600: URLs may carry credentials).
    package func save(_ jobs: [JobEntry]) throws(ControlError) {
        let document: JSONValue = ["version": 1, "jobs": .array(jobs.map(\.json))]
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty { mkdir(directory, 0o700) }
        do {
            try SmallFile.replace(path: path, contents: Array((document.serialized() + "\n").utf8), mode: 0o600)
        } catch {
            throw ControlError(.internal, "jobs_file_unwritable", "cannot save the jobs file \(path): \(error)")
        }
    }
}
