import CastCore
import CastLogging
import Dispatch
import Glibc
import Synchronization

/// The nearby permission persisted in castline's state folder (`nearby-permission.json`), shared
/// by every castline process of the user: `castline nearby permission grant` in one shell
/// reaches a running `castline nearby subscribe` in another within ``pollInterval``.
///
/// - File: `{"permission":"granted"|"revoked","changed_unix":<seconds>}`, written atomically
///   (temporary file, fsync, rename), mode 0644. Absent: `.notDetermined`.
/// - A file that cannot be read or parsed counts as not granted; the problem is logged (error,
///   once per distinct problem) and reported by ``problem``, never a crash.
/// - Thread-safe; change handlers run on the store's own queue.
package final class NearbyPermissionStore: @unchecked Sendable {
    package static let fileName = "nearby-permission.json"
    package static let pollInterval: Duration = .seconds(1)

    package let directory: String
    package var path: String { directory + "/" + Self.fileName }
    private let log: Logger
    private let state: Mutex<(permission: NearbyPermission, problem: String?, handlers: [Int: @Sendable (NearbyPermission) -> Void], next: Int)>
    private let queue = DispatchQueue(label: "castline.nearby.permission")
    private let onQueue = DispatchSpecificKey<Bool>()
    private let timer = Mutex<DispatchSourceTimer?>(nil)

    /// The state folder: `$CASTLINE_STATE_DIR`, systemd's `$STATE_DIRECTORY` (first entry),
    /// `$XDG_STATE_HOME/castline`, `$HOME/.local/state/castline`, else `/var/lib/castline`.
    package static func defaultDirectory(environment env: [String: String]) -> String {
        if let dir = env["CASTLINE_STATE_DIR"], !dir.isEmpty { return dir }
        if let dirs = env["STATE_DIRECTORY"], let first = dirs.split(separator: ":").first { return String(first) }
        if let xdg = env["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/castline" }
        if let home = env["HOME"], home.hasPrefix("/"), home != "/" { return home + "/.local/state/castline" }
        return "/var/lib/castline"
    }

    package init(directory: String, logSystem: LogSystem) {
        self.directory = directory
        log = Logger(class: "NearbyPermissionStore", system: logSystem)
        state = Mutex((.notDetermined, nil, [:], 0))
        queue.setSpecific(key: onQueue, value: true)
        let (permission, problem) = read()
        state.withLock { $0.permission = permission; $0.problem = problem }
        if let problem { log.error(problem, ["path": .string(path)]) }
    }

    deinit { timer.withLock { $0?.cancel() } }

    /// The permission as last read.
    package var permission: NearbyPermission { state.withLock { $0.permission } }

    /// Why the file could not be used (then the permission counts as not granted), or nil.
    package var problem: String? { state.withLock { $0.problem } }

    package func grant() throws(NearbyStoreError) { try set(.granted) }
    package func revoke() throws(NearbyStoreError) { try set(.revoked) }

    /// Calls `handler` (on the store's queue, in order) whenever the permission changes, whoever
    /// changed it: this process or another one (polled every ``pollInterval``). Returns a token
    /// for ``removeHandler(_:)``. May be called from a handler.
    @discardableResult
    package func onChange(_ handler: @escaping @Sendable (NearbyPermission) -> Void) -> Int {
        let token = state.withLock { s -> Int in
            s.next += 1
            s.handlers[s.next] = handler
            return s.next
        }
        timer.withLock { timer in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
            source.setEventHandler { [weak self] in self?.refreshOnQueue() }
            source.resume()
            timer = source
        }
        return token
    }

    package func removeHandler(_ token: Int) {
        _ = state.withLock { $0.handlers.removeValue(forKey: token) }
    }

    /// Re-reads the file now and notifies the handlers when the permission changed. Every read
    /// runs on the store's queue, so handlers see the changes in the order of the reads.
    package func refresh() {
        if DispatchQueue.getSpecific(key: onQueue) == true { refreshOnQueue() } else { queue.sync { refreshOnQueue() } }
    }

    private func refreshOnQueue() {
        let (permission, problem) = read()
        let (changed, handlers, newProblem) = state.withLock { s -> (Bool, [@Sendable (NearbyPermission) -> Void], Bool) in
            let changed = s.permission != permission
            let newProblem = problem != nil && problem != s.problem
            s.permission = permission
            s.problem = problem
            return (changed, Array(s.handlers.values), newProblem)
        }
        if newProblem, let problem { log.error(problem, ["path": .string(path)]) }
        guard changed else { return }
        log.info("nearby permission is now \(permission.word)", ["path": .string(path)])
        for handler in handlers { handler(permission) }
    }

    private func set(_ permission: NearbyPermission) throws(NearbyStoreError) {
        try makeDirectory()
        var seconds = timespec()
        clock_gettime(CLOCK_REALTIME, &seconds)
        let text = JSONValue.object(["permission": .string(permission.stored), "changed_unix": .int(Int64(seconds.tv_sec))]).serialized() + "\n"
        do { try SmallFile.replace(path: path, contents: Array(text.utf8), mode: 0o644) } catch {
            let operation: String
            switch error.step {
            case .create: operation = "create"
            case .rename: operation = "rename onto"
            default: operation = "write"
            }
            throw NearbyStoreError(path: error.path, operation: operation, code: error.code)
        }
        log.info("nearby permission \(permission.word) by uid \(getuid())", ["path": .string(path)])
        refresh()
    }

    private func makeDirectory() throws(NearbyStoreError) {
        var prefix = ""
        for part in directory.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw NearbyStoreError(path: prefix, operation: "create the folder", code: errno)
            }
        }
    }

    /// The permission in the file and, when the file is unusable, why.
    private func read() -> (NearbyPermission, String?) {
        let bad = "\(path) is not a castline nearby permission file; nearby permission counts as not granted"
            + " (run `castline nearby permission grant` or `revoke` to rewrite it)"
        let bytes: [UInt8]
        do {
            guard let contents = try SmallFile.read(path: path, limit: 65_536) else { return (.notDetermined, nil) }
            bytes = contents
        } catch {
            if error.step == .tooLarge { return (.notDetermined, bad) }
            return (.notDetermined, "cannot read \(path): \(error.reason); nearby permission counts as not granted")
        }
        guard let value = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)),
              let word = value["permission"]?.string else { return (.notDetermined, bad) }
        guard let permission = NearbyPermission(stored: word) else { return (.notDetermined, bad) }
        return (permission, nil)
    }
}

/// The permission file could not be written.
package struct NearbyStoreError: Error, Equatable, CustomStringConvertible {
    package var path: String
    package var operation: String
    package var code: Int32

    package var description: String { "cannot \(operation) \(path): \(String(cString: strerror(code)))" }
}
