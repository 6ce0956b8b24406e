internal import CCastShims
import CastCore
import CastLogging
import CastProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's memory as the kernel and the allocator see it, and the giving back of free heap
/// pages.
///
/// glibc's malloc returns memory to the system only from the top of each arena. Every reconnect
/// allocates a TLS connection's buffers and pipeline and frees them later, and the live objects
/// allocated in between keep those pages from being the top: the free pages stay resident. So
/// the daemon's RSS crept up with reconnects while its live heap stayed flat (the chaos soak:
/// +11 % RSS over 690 drops of 200 devices; with jemalloc profiling the same run, the live heap
/// went 39.6 → 42.2 MB with no trend). ``trim()`` gives every whole free page back, and
/// ``mapLargeBlocksOnTheirOwn(environment:logSystem:)`` keeps each connection's TLS buffers out
/// of the arenas altogether.
package enum ProcessMemory {
    /// What malloc holds: bytes in use, bytes free inside its arenas (resident or not), and of
    /// the bytes in use those in blocks mapped on their own, with their count.
    package struct Heap: Sendable, Equatable {
        package let inUse: Int
        package let free: Int
        package let mapped: Int
        package let mappedBlocks: Int
    }

    package static var heap: Heap {
        let statistics = castline_heap_statistics_now()
        return Heap(inUse: Int(statistics.in_use), free: Int(statistics.free),
                    mapped: Int(statistics.mapped), mappedBlocks: Int(statistics.mapped_blocks))
    }

    /// The size from which `castline run` has malloc map each block on its own: 16 KiB.
    ///
    /// Each TLS connection (swift-nio-ssl) holds a 16 KiB outbound buffer and a 32 KiB
    /// plaintext read buffer for its whole life, of which a Cast message touches a page or two.
    /// From the arenas, a reconnect's new buffers land between long-lived objects and the old
    /// ones leave holes that are reused only in part: over the 1,000-device chaos soak RSS grew
    /// 13 % in 10 minutes while the live heap stayed flat. Mapped on their own, a connection's
    /// buffers cost the pages it touches and go back to the system when it closes (+3.6 %).
    /// 32 KiB, which leaves the outbound buffer in the arenas, did not help (+15.7 %). The price
    /// is an mmap and munmap for every block of 16 KiB or more (docs/performance.md measures it
    /// on the API: 0.2 ms more on a 100-device listing, nothing on a cast).
    package static let mmapThreshold = 16 * 1024

    /// The variable through which the environment already sets glibc's threshold
    /// (`MALLOC_MMAP_THRESHOLD_`, or `glibc.malloc.mmap_threshold` in `GLIBC_TUNABLES`), nil if
    /// none does. That threshold is the operator's choice, and castline keeps it.
    package static func thresholdVariable(in environment: [String: String]) -> String? {
        if environment["MALLOC_MMAP_THRESHOLD_"] != nil { return "MALLOC_MMAP_THRESHOLD_" }
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("glibc.malloc.mmap_threshold=") { return "GLIBC_TUNABLES" }
        return nil
    }

    /// Has malloc map every block of ``mmapThreshold`` bytes or more on its own, unless the
    /// environment chose a threshold. Process-wide and for the life of the process, so only
    /// `castline run` calls it, once, before any connection is made. Logs what it did at debug.
    package static func mapLargeBlocksOnTheirOwn(environment: [String: String], logSystem: LogSystem) {
        let log = Logger(class: "ProcessMemory", system: logSystem)
        if let variable = thresholdVariable(in: environment) {
            log.debug("malloc's mmap threshold is left to the environment (\(variable))", ["variable": .string(variable)])
            return
        }
        guard castline_heap_set_mmap_threshold(mmapThreshold) == 1 else {
            log.warning("malloc refused an mmap threshold of \(mmapThreshold) bytes; TLS buffers stay in the arenas",
                        ["thresholdBytes": .int(mmapThreshold)])
            return
        }
        log.debug("malloc maps blocks of \(mmapThreshold / 1024) KiB and more on their own", ["thresholdBytes": .int(mmapThreshold)])
    }

    /// The resident set in bytes (`/proc/self/statm`), nil if it cannot be read.
    package static var residentBytes: Int? {
        guard let bytes = try? SmallFile.read(path: "/proc/self/statm", limit: 256) else { return nil }
        let fields = bytes.split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The open file descriptors (entries of `/proc/self/fd`), nil if it cannot be read.
    package static var openDescriptors: Int? {
        guard let dir = opendir("/proc/self/fd") else { return nil }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        return count - 1   // the descriptor opendir itself holds
    }

    /// What one ``trim()`` did.
    package struct Trim: Sendable {
        /// Resident bytes before minus after (0 when RSS is unreadable; negative if another
        /// thread allocated meanwhile).
        package let released: Int
        package let seconds: Double
        package let heap: Heap
    }

    /// Gives every whole free page of every arena back to the system (`malloc_trim(0)`). It
    /// takes each arena's lock in turn while it walks the arena's free chunks: a few
    /// milliseconds on a daemon with 1,000 devices.
    package static func trim() -> Trim {
        let before = residentBytes
        let started = MonotonicClock.seconds()
        _ = castline_heap_trim()
        let seconds = MonotonicClock.seconds() - started
        let after = residentBytes
        let released = before.flatMap { b in after.map { b - $0 } } ?? 0
        return Trim(released: released, seconds: seconds, heap: heap)
    }

    /// How often the daemon trims.
    package static let trimInterval = 30.0

    /// Trims every ``trimInterval`` seconds until cancelled, each trim a debug record.
    package static func trimPeriodically(logSystem: LogSystem) -> Task<Void, Never> {
        let log = Logger(class: "ProcessMemory", system: logSystem)
        return Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(trimInterval))
                if Task.isCancelled { return }
                let trim = trim()
                log.debug("returned \(trim.released / 1024) KiB of free heap to the system in \(Int((trim.seconds * 1000).rounded())) ms", [
                    "releasedBytes": .int(trim.released), "durationMs": .double((trim.seconds * 1000 * 100).rounded() / 100),
                    "heapInUseBytes": .int(trim.heap.inUse), "heapFreeBytes": .int(trim.heap.free),
                ])
            }
        }
    }
}
