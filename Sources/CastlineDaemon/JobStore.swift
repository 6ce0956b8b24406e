import CastCore
import CastLogging
import CastlineConfig
#if canImport(Glibc)
import Glibc
#endif

/// The jobs added through the API: desired state kept in one JSON file
/// (`{"version": 1, "jobs": [...]}`, the config's job keys), written atomically on every change
/// so they survive a restart. A job in the file that no longer passes the checks is moved to the
/// quarantine file beside it (`<file>.quarantine`, JSON Lines: the job, where it was, why) and
/// named in an error record; the others load, and the file is rewritten with them. A file that
/// is not the jobs document at all is moved aside whole (`<file>.bad-<unix time>`), never
/// deleted.
package struct JobStore: Sendable {
    package let path: String
    let log: Logger

    package init(path: String, logSystem: LogSystem) {
        self.path = path
        log = Logger(class: "JobStore", system: logSystem)
    }

    /// The most API jobs the store keeps (each at most ``JobEntry/maximumBytes`` expanded).
    package static let maximumJobs = 64

    /// The saved jobs (none when the file does not exist yet).
    package func load() -> [JobEntry] {
        let bytes: [UInt8]
        do {
            guard let read = try SmallFile.read(path: path, limit: (Self.maximumJobs + 1) * (JobEntry.maximumBytes + 4096)) else { return [] }
            bytes = read
        } catch {
            moveAside("cannot be read (\(error))")
            return []
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let root = try? JSONValue.parse(text), let list = root["jobs"]?.array else {
            moveAside("is not {\"version\": 1, \"jobs\": [...]}")
            return []
        }
        var jobs: [JobEntry] = []
        var quarantined: [JSONValue] = []
        for (index, item) in list.enumerated() {
            let name = item["name"]?.string ?? "#\(index)"
            do {
                let job = try JobEntry.parse(item.serialized(), source: "\(path) jobs[\(index)]")
                guard jobs.count < Self.maximumJobs, !jobs.contains(where: { $0.name == job.name }) else {
                    throw ConfigErrors([ConfigDiagnostic(file: path, mark: SourceMark(line: 1, column: 1),
                                                         message: jobs.count >= Self.maximumJobs ? "more than \(Self.maximumJobs) jobs" : "a second job named \(job.name)")])
                }
                jobs.append(job)
            } catch {
                log.error("jobs file: job \(name) (jobs[\(index)]) quarantined, the others load: \(error)",
                          ["path": .string(path), "job": .string(name), "quarantine": .string(path + ".quarantine")])
                quarantined.append(["job": item, "index": .int(Int64(index)), "reason": .string("\(error)")])
            }
        }
        if !quarantined.isEmpty {
            let lines = quarantined.map { $0.serialized() + "\n" }.joined()
            let fd = open(path + ".quarantine", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            if fd >= 0 {
                _ = Array(lines.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            try? save(jobs)
        }
        return jobs
    }

    /// Moves an unreadable jobs file aside (kept for the operator) and says so.
    private func moveAside(_ why: String) {
        let aside = "\(path).bad-\(time(nil))"
        let moved = rename(path, aside) == 0
        log.error("the jobs file \(why); \(moved ? "moved to \(aside)" : "left in place (cannot move it: \(String(cString: strerror(errno))))"); starting without API jobs",
                  ["path": .string(path), "movedTo": .string(moved ? aside : "")])
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
