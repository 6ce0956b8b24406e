internal import CCastShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reads what a plugin hands over (strings, structs, arrays) without trusting a pointer, a
/// length or a terminating NUL: a read past the end of a mapping, or of an unmapped or
/// unreadable address, fails with a reason instead of crashing castline.
///
/// Memory inside a loaded plugin image (its static strings and descriptors: the common case)
/// is read directly, bounded by the end of its segment. Anything else (a plugin's heap, its
/// stack) is copied with `process_vm_readv` on this process, which fails (EFAULT) for an address
/// that is not readable, one page at a time. Where a seccomp filter forbids that call (systemd's
/// `SystemCallFilter=@system-service` leaves it out), the copy goes through `/proc/self/mem`
/// instead: it fails (EIO) for unmapped memory, though it reads a mapped page whatever its
/// protection. Thread-safe.
enum PluginMemory {
    /// Why a read failed.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case null
        case unreadable
        /// No NUL within the bound (the bound is the value).
        case unterminated(Int)

        var description: String {
            switch self {
            case .null: return "NULL"
            case .unreadable: return "not readable memory"
            case .unterminated(let limit): return "not NUL-terminated within \(limit) bytes"
            }
        }
    }

    /// Bounds on what the host reads from a plugin (castline_plugin.h lists them).
    enum Limit {
        static let identifier = 64
        static let name = 256
        static let text = 4096
        static let message = 65_536
        static let json = 1 << 20
        static let structSize = 4096
        static let features = 256
    }

    // MARK: Strings

    /// The NUL-terminated UTF-8 string at `pointer`, at most `limit` bytes before its NUL.
    static func string(_ pointer: UnsafePointer<CChar>?, limit: Int) -> Result<String, Failure> {
        bytesOfString(pointer, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `string(_:limit:)`, nil on any failure.
    static func optionalString(_ pointer: UnsafePointer<CChar>?, limit: Int) -> String? {
        try? string(pointer, limit: limit).get()
    }

    /// The bytes of the NUL-terminated string at `pointer` (without the NUL).
    static func bytesOfString(_ pointer: UnsafePointer<CChar>?, limit: Int) -> Result<[UInt8], Failure> {
        guard let pointer else { return .failure(.null) }
        let start = UInt(bitPattern: pointer)
        if let end = Images.directEnd(of: start) {
            let span = Int(min(UInt(limit + 1), end - start))
            let raw = UnsafeRawPointer(pointer)
            if let nul = memchr(raw, 0, span) {
                let count = raw.distance(to: UnsafeRawPointer(nul))
                return .success(Array(UnsafeRawBufferPointer(start: raw, count: count)))
            }
            if span > limit { return .failure(.unterminated(limit)) }
            // The string runs past the image's segment: read the rest the careful way.
        }
        var result: [UInt8] = []
        var address = start
        let page = UInt(pageSize)
        while result.count <= limit {
            let chunk = Int(min(page - address % page, UInt(limit + 1 - result.count)))
            guard chunk > 0, let bytes = copy(address: address, count: chunk) else { return .failure(.unreadable) }
            if let nul = bytes.firstIndex(of: 0) {
                result += bytes[..<nul]
                return result.count <= limit ? .success(result) : .failure(.unterminated(limit))
            }
            result += bytes
            address += UInt(chunk)
        }
        return .failure(.unterminated(limit))
    }

    /// `count` bytes at `pointer`, or nil when any of them is not readable.
    static func bytes(_ pointer: UnsafeRawPointer?, count: Int) -> [UInt8]? {
        guard let pointer, count >= 0 else { return nil }
        guard count > 0 else { return [] }
        let start = UInt(bitPattern: pointer)
        if let end = Images.directEnd(of: start), end - start >= UInt(count) {
            return Array(UnsafeRawBufferPointer(start: pointer, count: count))
        }
        return copy(address: start, count: count)
    }

    /// The first `size` bytes of a `T` at `pointer` in a zeroed `T` (a plugin struct of an older
    /// minor is shorter), or nil when they are not readable.
    static func structPrefix<T>(_ pointer: UnsafeRawPointer?, size: Int, as type: T.Type) -> T? {
        let wanted = min(max(size, 0), MemoryLayout<T>.size)
        guard let bytes = bytes(pointer, count: wanted) else { return nil }
        let result = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        defer { result.deallocate() }
        result.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.size)
        bytes.withUnsafeBytes { result.copyMemory(from: $0.baseAddress!, byteCount: wanted) }
        return result.load(as: T.self)
    }

    /// Whether `function` points into an executable segment of a loaded image (a function
    /// pointer a plugin declared), so that calling it is not a jump into data or garbage.
    static func isCode(_ function: UnsafeRawPointer?) -> Bool {
        guard let function else { return false }
        return Images.shared.isExecutable(UInt(bitPattern: function))
    }

    /// Text safe to put in a log line: printable ASCII kept, anything else as `\xNN`, cut at
    /// 80 bytes (garbage a plugin handed over never reaches a log raw).
    static func printable<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out = ""
        for (index, byte) in bytes.enumerated() {
            if index == 80 { return out + "…" }
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") { out.unicodeScalars.append(Unicode.Scalar(byte)) } else {
                out += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return out
    }

    // MARK: Copying

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// `/proc/self/mem`, opened once (-1 when it cannot be): the way when `process_vm_readv` is
    /// not allowed.
    private static let selfMemory: Int32 = open("/proc/self/mem", O_RDONLY | O_CLOEXEC)
    /// Whether `process_vm_readv` answered something other than EPERM/ENOSYS once (a filter
    /// that forbids it forbids it for the life of the process).
    private static let vmReadAllowed: Bool = {
        var byte: UInt8 = 0
        var probe: UInt8 = 1
        let done = withUnsafeMutablePointer(to: &byte) { local in
            withUnsafePointer(to: &probe) { castline_read_own_memory(local, $0, 1) }
        }
        return done == 1 || (errno != EPERM && errno != ENOSYS)
    }()

    /// `count` bytes at `address`, nil when not all are readable.
    private static func copy(address: UInt, count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        let read: Int = buffer.withUnsafeMutableBytes { out in
            if vmReadAllowed { return castline_read_own_memory(out.baseAddress, UnsafeRawPointer(bitPattern: address), count) }
            guard selfMemory >= 0, address <= UInt(Int64.max) else { return -1 }
            return pread(selfMemory, out.baseAddress, count, off_t(Int64(address)))
        }
        return read == count ? buffer : nil
    }

    // MARK: Loaded images

    /// The readable and the executable segments of every loaded image, refreshed when an
    /// address falls outside all of them (a plugin loaded since).
    final class Images: Sendable {
        static let shared = Images()

        /// Where a direct read from `address` may go: the end of its image segment. Never under
        /// the fuzzer: AddressSanitizer poisons the gaps between globals, which are readable
        /// memory but not any object's.
        static func directEnd(of address: UInt) -> UInt? {
            #if FUZZING
            return nil
            #else
            return shared.readableEnd(of: address)
            #endif
        }

        private struct Segments {
            var readable: [(start: UInt, end: UInt)] = []
            var executable: [(start: UInt, end: UInt)] = []
            /// The loader's count of loads and unloads when these were read.
            var generation: UInt64 = .max
        }

        private let segments = Mutex(Segments())

        /// The end of the readable segment `address` lies in, nil when it lies in none.
        func readableEnd(of address: UInt) -> UInt? {
            if let end = find(address, executable: false) { return end }
            guard refresh() else { return nil }
            return find(address, executable: false)
        }

        func isExecutable(_ address: UInt) -> Bool {
            if find(address, executable: true) != nil { return true }
            guard refresh() else { return false }
            return find(address, executable: true) != nil
        }

        private func find(_ address: UInt, executable: Bool) -> UInt? {
            segments.withLock { s in
                (executable ? s.executable : s.readable).first { address >= $0.start && address < $0.end }?.end
            }
        }

        /// Reads the segments again when an object was loaded or unloaded since; false when
        /// nothing changed (a heap address outside every image costs one cheap check).
        private func refresh() -> Bool {
            let generation = UInt64(castline_loaded_generation())
            guard segments.withLock({ $0.generation != generation }) else { return false }
            var collected = Segments()
            collected.generation = generation
            var raw = [castline_segment](repeating: castline_segment(), count: 4096)
            var objects = 0
            let count = raw.withUnsafeMutableBufferPointer { castline_loaded_segments($0.baseAddress, $0.count, &objects) }
            for segment in raw.prefix(count) {
                if segment.readable != 0 { collected.readable.append((segment.start, segment.end)) }
                if segment.executable != 0 { collected.executable.append((segment.start, segment.end)) }
            }
            segments.withLock { $0 = collected }
            return true
        }
    }
}
