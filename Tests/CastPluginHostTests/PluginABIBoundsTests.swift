import CCastPluginABI
@testable import CastPluginHost
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What crosses the ABI is checked against a bound and read without trusting a pointer, a length
/// or a NUL: hostile descriptors and strings are refused with a reason, never a crash.
@Suite struct PluginABIBoundsTests {
    /// Two pages: the first readable and filled with `fill`, the second unreadable.
    final class GuardedPage {
        let base: UnsafeMutableRawPointer
        let size = Int(sysconf(Int32(_SC_PAGESIZE)))

        init(fill: UInt8) {
            base = mmap(nil, size * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
            memset(base, Int32(fill), size)
            mprotect(base + size, size, PROT_NONE)
        }

        deinit { munmap(base, size * 2) }

        /// The last `count` bytes of the readable page.
        func tail(_ count: Int) -> UnsafeMutableRawPointer { base + size - count }
    }

    @Test("a string without a NUL before an unreadable page is refused, not read past its end")
    func unterminatedString() {
        let page = GuardedPage(fill: UInt8(ascii: "x"))
        let text = page.tail(100).assumingMemoryBound(to: CChar.self)
        #expect(PluginMemory.string(text, limit: 65_536) == .failure(.unreadable))
        #expect(PluginMemory.string(text, limit: 50) == .failure(.unterminated(50)))
        page.tail(1).storeBytes(of: 0, as: UInt8.self)
        #expect(PluginMemory.string(text, limit: 65_536) == .success(String(repeating: "x", count: 99)))
        #expect(PluginMemory.string(nil, limit: 10) == .failure(.null))
        #expect(PluginMemory.string(UnsafePointer(bitPattern: 8), limit: 10) == .failure(.unreadable))
    }

    @Test("strings in a loaded image are read directly, bounded by the limit")
    func imageStrings() {
        let literal: StaticString = "in the image"
        let pointer = UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
        #expect(PluginMemory.string(pointer, limit: 64) == .success("in the image"))
        #expect(PluginMemory.string(pointer, limit: 4) == .failure(.unterminated(4)))
    }

    @Test("bytes and structs are copied only when every byte is readable")
    func bytesAndStructs() {
        let page = GuardedPage(fill: 7)
        #expect(PluginMemory.bytes(page.tail(16), count: 16) == [UInt8](repeating: 7, count: 16))
        #expect(PluginMemory.bytes(page.tail(16), count: 17) == nil)
        #expect(PluginMemory.structPrefix(page.tail(8), size: 8, as: (UInt32, UInt32, UInt64).self).map { $0.0 } == 0x0707_0707)
        #expect(PluginMemory.structPrefix(page.tail(8), size: 16, as: (UInt32, UInt32, UInt64).self) == nil)
    }

    @Test("a function pointer must point into code")
    func code() {
        let function: @convention(c) () -> Void = {}
        #expect(PluginMemory.isCode(unsafeBitCast(function, to: UnsafeRawPointer.self)))
        let page = GuardedPage(fill: 0)
        #expect(!PluginMemory.isCode(UnsafeRawPointer(page.base)))
        #expect(!PluginMemory.isCode(nil))
    }

    @Test("garbage is logged escaped and cut")
    func printable() {
        #expect(PluginMemory.printable(Array("ok\u{1b}[2J\\".utf8)) == "ok\\x1b[2J\\x5c")
        #expect(PluginMemory.printable([UInt8](repeating: 0x41, count: 100)).count == 81)
    }

    /// A descriptor laid out by hand in a guarded page: its bytes end where the page does.
    func descriptor(_ body: (UnsafeMutablePointer<castline_plugin_descriptor>) -> Void,
                    check: (Result<LoadedPlugin, PluginLoadError>) -> Void) {
        let page = GuardedPage(fill: 0)
        let raw = page.tail(MemoryLayout<castline_plugin_descriptor>.size).assumingMemoryBound(to: castline_plugin_descriptor.self)
        raw.pointee.abi_major = UInt32(CASTLINE_PLUGIN_ABI_MAJOR)
        raw.pointee.abi_minor = UInt32(CASTLINE_PLUGIN_ABI_MINOR)
        raw.pointee.struct_size = UInt32(MemoryLayout<castline_plugin_descriptor>.size)
        raw.pointee.feature_struct_size = UInt32(MemoryLayout<castline_feature>.size)
        let id: StaticString = "hostile"
        raw.pointee.id = UnsafeRawPointer(id.utf8Start).assumingMemoryBound(to: CChar.self)
        body(raw)
        check(PluginLoader.check(UnsafePointer(raw), path: "/x/hostile.so"))
    }

    @Test("a descriptor's struct_size of 0xFFFFFFFF, a huge feature stride or count is refused")
    func hugeSizes() {
        descriptor({ $0.pointee.struct_size = 0xFFFF_FFFF }) { result in
            guard case .failure(let error) = result else { Issue.record("accepted"); return }
            #expect(error.reason.contains("struct_size 4294967295 is over the 4096 bytes"), "\(error.reason)")
        }
        // A struct_size over the host's own: only the host's prefix is read (a newer minor).
        descriptor({ $0.pointee.struct_size = 200 }) { result in
            #expect((try? result.get())?.id == "hostile")
        }
        descriptor({ $0.pointee.feature_count = 1 << 40; $0.pointee.features = UnsafePointer(bitPattern: 64) }) { result in
            guard case .failure(let error) = result else { Issue.record("accepted"); return }
            #expect(error.reason.contains("at most 256"), "\(error.reason)")
        }
    }

    @Test("a descriptor that runs into unreadable memory is refused, not read")
    func descriptorPastReadableMemory() {
        let page = GuardedPage(fill: 0)
        let raw = page.tail(40)
        raw.storeBytes(of: UInt32(CASTLINE_PLUGIN_ABI_MAJOR), as: UInt32.self)
        raw.storeBytes(of: UInt32(CASTLINE_PLUGIN_ABI_MINOR), toByteOffset: 4, as: UInt32.self)
        raw.storeBytes(of: UInt32(MemoryLayout<castline_plugin_descriptor>.size), toByteOffset: 8, as: UInt32.self)
        guard case .failure(let error) = PluginLoader.check(UnsafePointer(raw.assumingMemoryBound(to: castline_plugin_descriptor.self)), path: "/x/h.so") else {
            Issue.record("accepted")
            return
        }
        #expect(error.reason.contains("not readable memory"), "\(error.reason)")
    }

    @Test("a feature count that runs past the array's readable memory refuses the whole plugin")
    func countPastTheArray() {
        let page = GuardedPage(fill: 0)
        let features = page.tail(MemoryLayout<castline_feature>.size).assumingMemoryBound(to: castline_feature.self)
        descriptor({ $0.pointee.features = UnsafePointer(features); $0.pointee.feature_count = 3 }) { result in
            guard case .failure(let error) = result else { Issue.record("accepted"); return }
            #expect(error.reason.contains("feature_count exceeds the array"), "\(error.reason)")
        }
    }

    @Test("garbage after a too-short array refuses the whole plugin, and the text holds no raw bytes")
    func garbageFeature() {
        let page = GuardedPage(fill: 0)
        let stride = MemoryLayout<castline_feature>.size
        let base = page.tail(stride * 3)
        // Feature #1: an id pointer to bytes that are no id (control characters), kind 77.
        let junk = page.tail(stride * 3 + 64)
        memcpy(junk, "\u{1b}[2J\u{7f}x", 7)
        let second = (base + stride).assumingMemoryBound(to: castline_feature.self)
        second.pointee.kind = 77
        second.pointee.id = UnsafePointer(junk.assumingMemoryBound(to: CChar.self))
        let first = base.assumingMemoryBound(to: castline_feature.self)
        let name: StaticString = "fine"
        first.pointee.kind = 4   // a log sink, without a vtable: refused on its own
        first.pointee.id = UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
        descriptor({ $0.pointee.features = UnsafePointer(first); $0.pointee.feature_count = 3 }) { result in
            guard case .failure(let error) = result else { Issue.record("accepted"); return }
            #expect(error.reason.contains("feature #1 has an invalid id"), "\(error.reason)")
            #expect(error.reason.contains("\\x1b"), "\(error.reason)")
            #expect(!error.reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "no control character in \(error.reason)")
        }
    }
}
