import CastCore

/// The function symbols of an ELF64 little-endian shared library (its `.symtab`, else its
/// `.dynsym`), read from the file on disk, to name the frames of an isolated helper's crash
/// report that `dladdr` could not (a `static` callback is in no dynamic symbol table). The host
/// reads it after the crash, in ordinary context: the helper's signal handler stays
/// async-signal-safe. Bounded: a file over ``maximumBytes`` or malformed gives nil; every offset
/// is checked against the bytes read. Value type.
struct ELFSymbols: Sendable {
    static let maximumBytes = 256 << 20

    struct Symbol: Sendable, Equatable {
        var name: String
        var start: UInt64
        var size: UInt64
    }

    /// Sorted by start address.
    private(set) var functions: [Symbol]
    /// The lowest `PT_LOAD` address: a frame's offset from the library's base is an address
    /// this far into the file's address space.
    private(set) var base: UInt64

    init?(path: String) {
        guard let bytes = try? SmallFile.read(path: path, limit: Self.maximumBytes) else { return nil }
        self.init(bytes: bytes)
    }

    init?(bytes: [UInt8]) {
        func u16(_ at: Int) -> UInt64? { at >= 0 && at + 2 <= bytes.count ? UInt64(bytes[at]) | UInt64(bytes[at + 1]) << 8 : nil }
        func u32(_ at: Int) -> UInt64? { guard let lo = u16(at), let hi = u16(at + 2) else { return nil }; return lo | hi << 16 }
        func u64(_ at: Int) -> UInt64? { guard let lo = u32(at), let hi = u32(at + 4) else { return nil }; return lo | hi << 32 }
        func int(_ v: UInt64?) -> Int? { v.flatMap { $0 < UInt64(Int.max / 2) ? Int($0) : nil } }
        // ELF magic, 64-bit, little-endian.
        guard bytes.count >= 64, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46, bytes[4] == 2, bytes[5] == 1,
              let phoff = int(u64(32)), let shoff = int(u64(40)), let phentsize = int(u16(54)), let phnum = int(u16(56)),
              let shentsize = int(u16(58)), let shnum = int(u16(60)), shnum < 65_536, phnum < 65_536, shentsize >= 64, phentsize >= 56
        else { return nil }
        var base = UInt64.max
        for i in 0..<phnum {
            let at = phoff + i * phentsize
            if u32(at) == 1, let vaddr = u64(at + 16) { base = min(base, vaddr & ~0xFFF) }   // PT_LOAD
        }
        self.base = base == .max ? 0 : base
        // Section headers: type at +4, offset +24, size +32, link +40, entsize +56.
        func section(_ i: Int) -> (type: UInt64, offset: Int, size: Int, link: Int, entsize: Int)? {
            let at = shoff + i * shentsize
            guard let type = u32(at + 4), let offset = int(u64(at + 24)), let size = int(u64(at + 32)), let link = int(u32(at + 40)),
                  let entsize = int(u64(at + 56)), offset + size <= bytes.count else { return nil }
            return (type, offset, size, link, entsize)
        }
        let tables = (0..<shnum).compactMap { i in section(i).map { (i, $0) } }
        guard let table = tables.first(where: { $0.1.type == 2 }) ?? tables.first(where: { $0.1.type == 11 }),   // SYMTAB, DYNSYM
              table.1.entsize >= 24, table.1.link < shnum, let strings = section(table.1.link) else { return nil }
        var functions: [Symbol] = []
        for n in 0..<(table.1.size / table.1.entsize) {
            let at = table.1.offset + n * table.1.entsize
            // st_name u32, st_info u8, st_other u8, st_shndx u16, st_value u64, st_size u64.
            guard let nameOffset = int(u32(at)), bytes[at + 4] & 0xF == 2, let value = u64(at + 8), let size = u64(at + 16), value != 0,
                  nameOffset < strings.size else { continue }
            let start = strings.offset + nameOffset
            let end = bytes[start..<(strings.offset + strings.size)].firstIndex(of: 0) ?? start
            guard end > start else { continue }
            functions.append(Symbol(name: String(decoding: bytes[start..<end], as: UTF8.self), start: value, size: size))
        }
        guard !functions.isEmpty else { return nil }
        self.functions = functions.sorted { $0.start < $1.start }
    }

    /// The function at `offset` from the library's base, and how far into it.
    func function(atOffset offset: UInt64) -> (name: String, offset: UInt64)? {
        let address = offset &+ base
        var low = 0, high = functions.count
        while low < high {
            let mid = (low + high) / 2
            if functions[mid].start <= address { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let f = functions[low - 1]
        guard address < f.start + max(f.size, 1) else { return nil }
        return (f.name, address - f.start)
    }

    /// A crash report's frames (`[symbol + N ](library + 0xOFFSET)`) with the frames in `library`
    /// (its path) that have no symbol named from its symbol table: `channel_on_message + 36
    /// (libX.so + 0x1234)`. Others are left as they are.
    static func symbolised(_ frames: [String], library path: String) -> [String] {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let prefix = "(\(name) + 0x"
        guard frames.contains(where: { $0.hasPrefix(prefix) }), let symbols = ELFSymbols(path: path) else { return frames }
        return frames.map { frame in
            guard frame.hasPrefix(prefix), frame.hasSuffix(")"),
                  let offset = UInt64(frame.dropFirst(prefix.count).dropLast(), radix: 16),
                  let found = symbols.function(atOffset: offset) else { return frame }
            return "\(found.name) + \(found.offset) \(frame)"
        }
    }
}
