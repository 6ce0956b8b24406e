import CastCore
#if canImport(Glibc)
import Glibc
#endif

/// A time zone from the system's tz database (`/usr/share/zoneinfo`, TZif version 2 or later):
/// the UTC offset in force at any instant. Past the file's last transition (2037 in Debian's
/// files) the last offset stays. Pure after loading.
package struct ZoneRules: Sendable, Hashable {
    package let name: String
    /// Transition instants (Unix seconds) and the offset (seconds east of UTC) from each on.
    let transitions: [(at: Int64, offset: Int32)]
    let initialOffset: Int32

    package static func == (a: ZoneRules, b: ZoneRules) -> Bool { a.name == b.name }
    package func hash(into hasher: inout Hasher) { hasher.combine(name) }

    package static let folder = "/usr/share/zoneinfo"

    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// UTC, with no file.
    package static let utc = ZoneRules(name: "UTC", transitions: [], initialOffset: 0)

    init(name: String, transitions: [(at: Int64, offset: Int32)], initialOffset: Int32) {
        self.name = name
        self.transitions = transitions
        self.initialOffset = initialOffset
    }

    /// The zone `name` (`Europe/Paris`, `UTC`) from `folder`.
    package static func load(_ name: String, folder: String = ZoneRules.folder) throws(Failure) -> ZoneRules {
        if name == "UTC" || name == "Etc/UTC" { return .utc }
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains(".."), name.utf8.count < 128 else {
            throw Failure(description: "\"\(name)\" is not a time zone name such as Europe/Paris")
        }
        let path = folder + "/" + name
        let bytes: [UInt8]?
        do { bytes = try SmallFile.read(path: path, limit: 1 << 20) } catch { throw Failure(description: "\(error)") }
        guard let bytes else { throw Failure(description: "no time zone \"\(name)\" in \(folder) (an IANA name such as Europe/Paris)") }
        return try parse(bytes, name: name)
    }

    /// A TZif file's version-2 data (64-bit transitions).
    static func parse(_ bytes: [UInt8], name: String) throws(Failure) -> ZoneRules {
        let bad = Failure(description: "\(name) is not a TZif file of version 2 or later")
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 << 8 | Int(bytes[at + $1]) } }
        func i64(_ at: Int) -> Int64 { Int64(bitPattern: (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) }) }
        func counts(_ at: Int) -> (ut: Int, std: Int, leap: Int, time: Int, type: Int, char: Int)? {
            guard bytes.count >= at + 44, bytes[at] == 0x54, bytes[at + 1] == 0x5A, bytes[at + 2] == 0x69, bytes[at + 3] == 0x66 else { return nil }
            return (u32(at + 20), u32(at + 24), u32(at + 28), u32(at + 32), u32(at + 36), u32(at + 40))
        }
        guard let v1 = counts(0), bytes[4] >= 0x32 else { throw bad }
        let second = 44 + v1.time * 5 + v1.type * 6 + v1.char + v1.leap * 8 + v1.std + v1.ut
        guard let v2 = counts(second) else { throw bad }
        let times = second + 44
        let indices = times + v2.time * 8
        let types = indices + v2.time
        guard v2.type > 0, bytes.count >= types + v2.type * 6 else { throw bad }
        func offset(ofType index: Int) -> Int32 { Int32(truncatingIfNeeded: u32(types + index * 6)) }
        var transitions: [(at: Int64, offset: Int32)] = []
        for i in 0..<v2.time {
            let type = Int(bytes[indices + i])
            guard type < v2.type else { throw bad }
            transitions.append((i64(times + i * 8), offset(ofType: type)))
        }
        return ZoneRules(name: name, transitions: transitions, initialOffset: offset(ofType: 0))
    }

    /// Seconds east of UTC at `instant` (Unix seconds).
    package func offset(at instant: Int64) -> Int32 {
        var low = 0, high = transitions.count
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid].at <= instant { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? initialOffset : transitions[low - 1].offset
    }
}
