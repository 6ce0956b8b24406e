import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A helper process of castline (`castline plugin-scan`, `castline plugin-host`) that runs plugin
/// code where its crash or hang cannot take the caller down.
///
/// Spawned with `posix_spawn`: stdin is `/dev/null`, stdout goes to the caller's stderr (a
/// plugin's stray `printf` never lands in a command's output), and fd 3 is one end of a Unix
/// socket pair, the only channel between the two (``FramedSocket``). The helper ends itself when
/// that socket reaches end-of-file, so it never outlives its caller. The caller ends it by PID
/// (``kill(_:)``) and collects its exit status (``reap(within:)``), each with a bound.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    let socket: FramedSocket
    /// The exit status once reaped. Held during a reap: a second caller (the reader thread and
    /// a stop, say) waits for the first and gets the same status; the pid is waited for once.
    private let status = Mutex<ExitStatus?>(nil)

    /// How a helper ended.
    enum ExitStatus: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let code): return "exited with status \(code)"
            case .signalled(let signal): return "crashed with signal \(signal) (\(ChildProcess.signalName(signal)))"
            }
        }
    }

    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    private init(pid: pid_t, socket: FramedSocket) {
        self.pid = pid
        self.socket = socket
    }

    /// Starts `executable` with `arguments` (argv[1…]). The environment is the caller's with
    /// `SWIFT_BACKTRACE=enable=no`: a crash ends the helper at once with its true signal, which
    /// is what the caller reports (the backtracer would spend seconds and may re-raise another).
    static func spawn(_ executable: String, _ arguments: [String]) throws(SpawnError) -> ChildProcess {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw SpawnError(description: "socketpair: \(String(cString: strerror(errno)))")
        }
        // The helper's end becomes its fd 3; dup2 onto itself would keep FD_CLOEXEC set.
        var childEnd = pair[1]
        if childEnd <= 3 {
            let moved = fcntl(childEnd, F_DUPFD_CLOEXEC, 10)
            close(childEnd)
            childEnd = moved
        }
        defer { close(childEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        posix_spawn_file_actions_adddup2(&actions, childEnd, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Default signal dispositions and an empty mask: the caller may block SIGTERM and friends
        // for its own signal handling, which the helper must not inherit.
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) }
        var environment: [UnsafeMutablePointer<CChar>?] = []
        var index = 0
        while let entry = environ[index] {
            if strncmp(entry, "SWIFT_BACKTRACE=", 16) != 0 { environment.append(strdup(entry)) }
            index += 1
        }
        environment.append(strdup("SWIFT_BACKTRACE=enable=no"))
        defer {
            argv.forEach { free($0) }
            environment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = (argv + [nil]).withUnsafeBufferPointer { args in
            (environment + [nil]).withUnsafeBufferPointer { env in
                posix_spawn(&pid, executable, &actions, &attributes, args.baseAddress!, env.baseAddress!)
            }
        }
        guard rc == 0 else {
            close(pair[0])
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        return ChildProcess(pid: pid, socket: FramedSocket(fd: pair[0]))
    }

    /// Sends `signal` to the helper (by its PID; nothing once it has been reaped).
    func kill(_ signal: Int32 = SIGKILL) {
        status.withLock { reaped in
            if reaped == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// The helper's exit status, waiting at most `seconds` for it to end by itself; past that it
    /// is killed (SIGKILL) and reaped. Closes the socket.
    @discardableResult
    func reap(within seconds: Double) -> ExitStatus {
        let ended = status.withLock { reaped -> ExitStatus in
            if let reaped { return reaped }
            let deadline = MonotonicDeadline(after: seconds)
            var raw: Int32 = 0
            var result = waitpid(pid, &raw, WNOHANG)
            while result == 0, !deadline.hasPassed {
                // The helper closes its socket before the kernel marks it exited: a short wait
                // covers that gap; past the deadline it is killed instead.
                var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                nanosleep(&pause, nil)
                result = waitpid(pid, &raw, WNOHANG)
            }
            if result == 0 {
                _ = Glibc.kill(pid, SIGKILL)
                while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
            }
            let ended = Self.decode(raw)
            reaped = ended
            return ended
        }
        socket.close()
        return ended
    }

    static func decode(_ raw: Int32) -> ExitStatus {
        let signal = raw & 0x7f
        if signal == 0 { return .exited((raw >> 8) & 0xff) }
        return .signalled(signal)
    }

    /// `SIGSEGV` for 11: the names a plugin author recognises.
    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: return "SIGSEGV"
        case SIGBUS: return "SIGBUS"
        case SIGABRT: return "SIGABRT"
        case SIGILL: return "SIGILL"
        case SIGFPE: return "SIGFPE"
        case SIGKILL: return "SIGKILL"
        case SIGTERM: return "SIGTERM"
        case SIGTRAP: return "SIGTRAP"
        case SIGPIPE: return "SIGPIPE"
        case SIGSYS: return "SIGSYS"
        default: return "signal \(signal)"
        }
    }
}

/// A point on the monotonic clock, `seconds` from now.
struct MonotonicDeadline: Sendable {
    let nanoseconds: UInt64

    init(after seconds: Double) {
        nanoseconds = Self.now() &+ UInt64(max(seconds, 0) * 1e9)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    var hasPassed: Bool { Self.now() >= nanoseconds }

    /// Milliseconds left, rounded up, for `poll` (0 once passed).
    var remainingMilliseconds: Int32 {
        let now = Self.now()
        guard nanoseconds > now else { return 0 }
        return Int32(clamping: (nanoseconds - now + 999_999) / 1_000_000)
    }
}
