internal import CCastPluginABI
import CastCore
import CastLogging
#if canImport(Glibc)
import Glibc
#endif

/// The fuzzer's way into the plugin ABI's checks (castline-fuzz target `pluginabi`, in Fuzz/):
/// hostile descriptors for the loader, and hostile arguments for every host service, laid out in
/// an arena whose end is an unreadable page. Not an API: it exists so the fuzzer reaches the
/// internal checks.
///
/// The input's first byte picks the mode (even: a descriptor; odd: host-service calls). The rest
/// is copied to the end of the arena; every 8-byte word whose top byte is 0xA5 becomes a pointer
/// into the arena (its low 16 bits, modulo the arena's size), so the fuzzer can build strings,
/// arrays and structs that point at each other; other words stay as they are (garbage
/// addresses). Nothing the loader or a host service does with it may crash or hang.
public enum PluginABIFuzzing {
    static let arenaSize = 16_384

    /// The arena (two pages' worth more than the input, then an unreadable page), mapped once.
    nonisolated(unsafe) private static let arena: UnsafeMutableRawPointer = {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let base = mmap(nil, arenaSize + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
        mprotect(base + arenaSize, page, PROT_NONE)
        return base
    }()

    private static let logSystem = LogSystem(filter: LoggerFilter(minimumLevel: .none))

    private static let contexts: (channel: PluginHostContext, discovery: PluginHostContext, bridge: PluginHostContext) = (
        PluginHostContext.register(pluginID: "fuzz", featureID: "channel", role: .channel(.init(send: { _, _, _ in 0 }, complete: { _, _ in true })),
                                   declaredNamespaces: ["urn:x-cast:fuzz"], logSystem: logSystem),
        PluginHostContext.register(pluginID: "fuzz", featureID: "discovery", role: .discovery(.init(found: { _ in nil }, lost: { _ in }, problem: { _ in })),
                                   logSystem: logSystem),
        PluginHostContext.register(pluginID: "fuzz", featureID: "bridge", role: .bridge(.init(request: { _, _ in 0 }, subscribe: { _ in 0 })),
                                   logSystem: logSystem))

    public static func run(_ data: UnsafeRawBufferPointer) {
        guard let mode = data.first, data.count > 1, data.count - 1 <= arenaSize else { return }
        let bytes = data.dropFirst()
        let start = arena + arenaSize - bytes.count
        memset(arena, 0, arenaSize - bytes.count)
        memcpy(start, UnsafeRawPointer(data.baseAddress! + 1), bytes.count)
        // Tagged words become pointers into the arena.
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = start.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if word >> 56 == 0xA5 {
                let target = arena + Int(word & 0xFFFF) % arenaSize
                start.storeBytes(of: UInt64(UInt(bitPattern: target)), toByteOffset: offset, as: UInt64.self)
            }
            offset += 8
        }
        if mode & 1 == 0 {
            _ = PluginLoader.check(UnsafePointer(OpaquePointer(start)), path: "/fuzz/descriptor.so")
        } else {
            hostCalls(start, count: bytes.count, selector: mode >> 1)
        }
    }

    /// One host service called with arguments taken from the arena's words.
    private static func hostCalls(_ start: UnsafeMutableRawPointer, count: Int, selector: UInt8) {
        func word(_ index: Int) -> UInt64 {
            let at = index * 8
            return at + 8 <= count ? start.loadUnaligned(fromByteOffset: at, as: UInt64.self) : 0
        }
        func pointer<T>(_ index: Int) -> UnsafePointer<T>? { UnsafePointer(bitPattern: UInt(word(index))) }
        let table = HostServices.table.pointee
        let (channel, discovery, bridge) = contexts
        switch selector % 9 {
        case 0:
            table.log(channel.pointer, Int32(truncatingIfNeeded: word(0) & 7), pointer(1), pointer(2), pointer(3),
                      Int(truncatingIfNeeded: word(4) % 128), pointer(5), UInt32(truncatingIfNeeded: word(6)), pointer(7))
        case 1: _ = table.level_enabled(channel.pointer, Int32(truncatingIfNeeded: word(0) & 7), pointer(1))
        case 2: _ = table.send_message(channel.pointer, pointer(0), pointer(1), pointer(2))
        case 3: _ = table.complete_command(channel.pointer, word(0), Int32(truncatingIfNeeded: word(1) & 1), pointer(2))
        case 4: _ = table.device_found(discovery.pointer, pointer(0))
        case 5:
            _ = table.device_lost(discovery.pointer, pointer(0))
            _ = table.discovery_problem(discovery.pointer, pointer(1))
        case 6: _ = table.control_request(bridge.pointer, word(0), pointer(1))
        case 7: _ = table.events_subscribe(bridge.pointer, pointer(0))
        default:
            // A media-format probe that emits (pointer, length) from the arena.
            emitArguments = (UnsafeRawPointer(bitPattern: UInt(word(0))), Int(truncatingIfNeeded: word(1) & 0x7FFF_FFFF_FFFF))
            let vtable = castline_media_format_vtable(version: 1, struct_size: UInt32(MemoryLayout<castline_media_format_vtable>.size),
                                                      content_types: nil, probe: { _, _, _, _, _, emit, context, _ in
                emit?(context, PluginABIFuzzing.emitArguments.pointer?.assumingMemoryBound(to: CChar.self), PluginABIFuzzing.emitArguments.length)
                return 0
            })
            let call = ProbeCall(vtable: vtable, userdata: PluginUserData(pointer: nil), url: nil, contentType: nil, body: nil)
            call.run()
            if let bytes = call.collector.bytes { precondition(bytes.count <= PluginMemory.Limit.json, "an emit over the bound was taken") }
        }
    }

    /// What the fuzzed probe emits (set just before the call, on the fuzzer's one thread).
    nonisolated(unsafe) static var emitArguments: (pointer: UnsafeRawPointer?, length: Int) = (nil, 0)
}
