internal import CCastShims
import CastCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One end of the socket pair between castline and a helper process: frames of JSON, each a
/// 4-byte big-endian length then that many bytes of JSON text (CastJSON's writer and parser).
///
/// Non-blocking underneath: every read and write waits in `poll` with the caller's deadline, so
/// a peer that stops reading or writing costs the caller its bound, never more. Writes from
/// several threads are serialized (a frame is never interleaved with another); reads are for
/// one thread. `send` uses `MSG_NOSIGNAL`: a peer that died is an error, not a SIGPIPE.
final class FramedSocket: @unchecked Sendable {
    /// Frames larger than this are refused (a corrupt length must not allocate gigabytes).
    static let maximumFrame = 64 << 20

    enum ReceiveError: Error, Equatable, CustomStringConvertible {
        case closed
        case timedOut
        case malformed(String)

        var description: String {
            switch self {
            case .closed: return "the helper closed its socket"
            case .timedOut: return "no answer in time"
            case .malformed(let reason): return "malformed frame: \(reason)"
            }
        }
    }

    private let fd: Int32
    private let writer = Mutex(false)
    /// The helper's socket to castline, on which its crash handler writes the crash report:
    /// each frame is written under the handler's claim too, so the report never lands inside one.
    private let sharedWithCrashReporter: Bool
    // Reader side (one thread): bytes received and not yet consumed.
    private var buffer: [UInt8] = []
    private var start = 0

    init(fd: Int32, sharedWithCrashReporter: Bool = false) {
        self.fd = fd
        self.sharedWithCrashReporter = sharedWithCrashReporter
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    deinit { close() }

    /// Closes the descriptor (once); a thread waiting in `receive` sees `.closed` or an error.
    func close() {
        let wasOpen = writer.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        if wasOpen { _ = shutdown(fd, Int32(SHUT_RDWR)); _ = Glibc.close(fd) }
    }

    /// Sends one frame; false when the peer is gone or did not take it before `deadline`.
    @discardableResult
    func send(_ value: JSONValue, deadline: MonotonicDeadline? = nil) -> Bool {
        var json = JSONWriter(capacity: 256)
        json.write(value)
        return send(json: json.bytes, deadline: deadline)
    }

    /// Sends JSON text already written (the log-sink batches build theirs in place).
    @discardableResult
    func send(json: UnsafeBufferPointer<UInt8>, deadline: MonotonicDeadline? = nil) -> Bool {
        let length = UInt32(json.count)
        var header: (UInt8, UInt8, UInt8, UInt8) = (UInt8(length >> 24), UInt8((length >> 16) & 0xff),
                                                     UInt8((length >> 8) & 0xff), UInt8(length & 0xff))
        return writer.withLock { closed -> Bool in
            guard !closed else { return false }
            if sharedWithCrashReporter {
                guard castline_frame_write_begin() != 0 else { return false }
            }
            defer { if sharedWithCrashReporter { castline_frame_write_end() } }
            let sentHeader = withUnsafeBytes(of: &header) { writeAll($0, deadline: deadline) }
            return sentHeader && writeAll(UnsafeRawBufferPointer(json), deadline: deadline)
        }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer, deadline: MonotonicDeadline?) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
                continue
            }
            if n < 0, errno == EINTR { continue }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK else { return false }
            guard wait(for: Int16(POLLOUT), deadline: deadline) else { return false }
        }
        return true
    }

    /// The next frame, waiting until `deadline` (nil: until one comes or the peer closes).
    func receive(deadline: MonotonicDeadline? = nil) -> Result<JSONValue, ReceiveError> {
        while true {
            let available = buffer.count - start
            if available >= 4 {
                let length = buffer.withUnsafeBufferPointer { b -> Int in
                    Int(b[start]) << 24 | Int(b[start + 1]) << 16 | Int(b[start + 2]) << 8 | Int(b[start + 3])
                }
                guard length <= Self.maximumFrame else { return .failure(.malformed("frame of \(length) bytes")) }
                if available >= 4 + length {
                    let frameStart = start + 4
                    start = frameStart + length
                    let parsed = buffer.withUnsafeBytes { raw -> Result<JSONValue, ReceiveError> in
                        do {
                            return .success(try JSONValue.parse(bytes: UnsafeRawBufferPointer(rebasing: raw[frameStart..<frameStart + length])))
                        } catch {
                            return .failure(.malformed("\(error)"))
                        }
                    }
                    compact()
                    return parsed
                }
            }
            switch fill(deadline: deadline) {
            case .success: continue
            case .failure(let error): return .failure(error)
            }
        }
    }

    /// Drops consumed bytes once they are most of the buffer.
    private func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 16, start * 2 > buffer.count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }

    private func fill(deadline: MonotonicDeadline?) -> Result<Void, ReceiveError> {
        let chunk = 1 << 16
        while true {
            let old = buffer.count
            buffer.reserveCapacity(old + chunk)
            let n = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunk) { temp -> Int in
                let n = recv(fd, temp.baseAddress!, chunk, 0)
                if n > 0 { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: temp[0..<n])) }
                return n
            }
            if n > 0 { return .success(()) }
            if n == 0 { return .failure(.closed) }
            if errno == EINTR { continue }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { return .failure(.closed) }
            guard wait(for: Int16(POLLIN), deadline: deadline) else {
                return .failure(deadline?.hasPassed == true ? .timedOut : .closed)
            }
        }
    }

    /// Waits until the socket is ready for `events`; false at the deadline or on an error.
    private func wait(for events: Int16, deadline: MonotonicDeadline?) -> Bool {
        while true {
            var p = pollfd(fd: fd, events: events, revents: 0)
            let timeout = deadline.map { $0.remainingMilliseconds } ?? -1
            let rc = poll(&p, 1, timeout)
            if rc > 0 { return p.revents & (events | Int16(POLLHUP) | Int16(POLLERR)) != 0 }
            if rc == 0 { return false }
            if errno != EINTR { return false }
        }
    }
}
