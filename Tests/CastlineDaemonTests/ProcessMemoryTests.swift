import CastlineDaemon
import Glibc
import Testing

/// The heap as glibc's malloc reports it, and the trim that gives free pages back, on this
/// process's real heap. Other suites run alongside, so each figure has a wide margin: the test
/// moves 64 MiB, and asserts at most 16 MiB less than that.
@Suite(.serialized) struct ProcessMemoryTests {
    static let mib = 1 << 20

    /// 1,024 blocks of 64 KiB (under malloc's mmap threshold, so inside an arena), each touched
    /// so that it is resident.
    static func allocate() -> [UnsafeMutableRawPointer] {
        (0..<1024).map { _ in
            let block = malloc(64 << 10)!
            memset(block, 0x5A, 64 << 10)
            return block
        }
    }

    @Test func theHeapCountsLiveAndFreedMemory() throws {
        let before = ProcessMemory.heap
        let blocks = Self.allocate()
        let allocated = ProcessMemory.heap
        #expect(allocated.inUse - before.inUse >= 48 * Self.mib, "in use \(before.inUse) → \(allocated.inUse)")
        for block in blocks { free(block) }
        let freed = ProcessMemory.heap
        #expect(allocated.inUse - freed.inUse >= 48 * Self.mib, "in use \(allocated.inUse) → \(freed.inUse)")
    }

    /// Every other block freed: the free ones sit between live ones, so malloc cannot give them
    /// back from the arena's top and they stay resident until a trim (what reconnects did to the
    /// daemon). Without the trim, nothing is released.
    @Test func aTrimGivesFreePagesBetweenLiveOnesBack() throws {
        let blocks = Self.allocate()
        defer { for (i, block) in blocks.enumerated() where i % 2 == 1 { free(block) } }
        for (i, block) in blocks.enumerated() where i % 2 == 0 { free(block) }
        let freeBefore = ProcessMemory.heap.free
        #expect(freeBefore >= 24 * Self.mib, "free \(freeBefore)")
        let trim = ProcessMemory.trim()
        // 512 free blocks of 64 KiB hold 15 whole pages each: 30 MiB.
        #expect(trim.released >= 16 * Self.mib, "released \(trim.released) bytes in \(trim.seconds) s")
        #expect(trim.seconds < 1)
    }

    /// A block larger than any free space in malloc's arenas is mapped on its own (a thread
    /// arena's heap is at most 64 MiB, and the main arena's free top is trimmed beyond 64 MiB;
    /// a smaller block, even past the mmap threshold, may be cut from free space other tests
    /// left). It is counted as mapped while it lives, and as in use. 256 MiB, never touched, so
    /// never resident; 200 asserted, as other suites allocate meanwhile.
    @Test func aBlockMappedOnItsOwnIsCounted() throws {
        let before = ProcessMemory.heap
        let block = try #require(malloc(256 * Self.mib))
        let allocated = ProcessMemory.heap
        free(block)
        let freed = ProcessMemory.heap
        #expect(allocated.mapped - before.mapped >= 200 * Self.mib, "mapped \(before.mapped) → \(allocated.mapped)")
        #expect(allocated.mappedBlocks >= 1 && allocated.mapped <= allocated.inUse)
        #expect(allocated.mapped - freed.mapped >= 200 * Self.mib, "mapped \(allocated.mapped) → \(freed.mapped)")
    }

    /// `castline run` maps blocks of 16 KiB and more on their own, unless the environment already
    /// set glibc's threshold (the test does not call mallopt: it is process-wide, and the other
    /// tests' 64 KiB blocks rely on the default; test_api.py checks the daemon's heap).
    @Test func theThresholdIsCastlinesUnlessTheEnvironmentSetsOne() {
        #expect(ProcessMemory.mmapThreshold == 16 * 1024)
        #expect(ProcessMemory.thresholdVariable(in: [:]) == nil)
        #expect(ProcessMemory.thresholdVariable(in: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=2"]) == nil)
        #expect(ProcessMemory.thresholdVariable(in: ["MALLOC_MMAP_THRESHOLD_": "65536"]) == "MALLOC_MMAP_THRESHOLD_")
        #expect(ProcessMemory.thresholdVariable(in: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536"])
                    == "GLIBC_TUNABLES")
    }

    /// The resident size, and the descriptors counted again by asking each number whether it is
    /// open (other suites open and close some meanwhile: a margin of 16).
    @Test func residentSizeAndDescriptorsAreRead() throws {
        let resident = try #require(ProcessMemory.residentBytes)
        #expect(resident > 4 * Self.mib)
        var pipes = [Int32](repeating: -1, count: 2)
        try #require(pipe(&pipes) == 0)
        defer { close(pipes[0]); close(pipes[1]) }
        let descriptors = try #require(ProcessMemory.openDescriptors)
        let limit = Int32(min(sysconf(Int32(_SC_OPEN_MAX)), 65_536))
        let open = (0..<limit).filter { fcntl($0, F_GETFD) != -1 }.count
        #expect(abs(descriptors - open) <= 16, "/proc/self/fd says \(descriptors), fcntl finds \(open)")
        #expect(open >= 5)
    }
}
