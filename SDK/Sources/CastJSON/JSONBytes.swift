/// Byte scans shared by the parser and the writer: 16 bytes at a time in a `SIMD16<UInt8>`, 8 in a
/// `UInt64` (SWAR) for what is left, never reading outside the input.
///
/// The tests are written as lane-wise arithmetic (`&-`, `^`, `&`, `|`), which the compiler turns
/// into vector instructions (SSE2, NEON); `SIMD16` comparisons (`.<`, `.==`) would become a
/// branch per lane.
@usableFromInline
enum JSONBytes {
    /// Bit 7 of each lane is set where the byte is a control character (below 0x20) and, when
    /// asked, `"` or `\`, or 0x80 and above; every other bit is clear. As two words in memory
    /// order (byte 0 in bits 0–7 of the first).
    @inlinable @inline(__always)
    static func specialBytes(_ block: SIMD16<UInt8>, quotesAndBackslashes: Bool, nonASCII: Bool) -> (UInt64, UInt64) {
        // Lane-wise, so no borrow crosses into the next byte: every lane is exact.
        var wrapped = block &- SIMD16(repeating: 0x20)
        if quotesAndBackslashes {
            wrapped |= (block ^ SIMD16(repeating: 0x22)) &- SIMD16(repeating: 1)
            wrapped |= (block ^ SIMD16(repeating: 0x5C)) &- SIMD16(repeating: 1)
        }
        var special = wrapped & ~block
        if nonASCII { special |= block }
        special &= SIMD16(repeating: 0x80)
        let words = unsafeBitCast(special, to: SIMD2<UInt64>.self)
        return (UInt64(littleEndian: words[0]), UInt64(littleEndian: words[1]))
    }

    /// The same test on eight bytes in one word (memory order: see `UInt64(littleEndian:)`). Only
    /// the lowest set bit is exact (a borrow runs upwards from a byte that really matches), which
    /// is all the scans use.
    @inlinable @inline(__always)
    static func specialBytes(_ word: UInt64, quotesAndBackslashes: Bool, nonASCII: Bool) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        var wrapped = word &- ones &* 0x20
        if quotesAndBackslashes {
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            wrapped |= (quotes &- ones) | (backslashes &- ones)
        }
        var special = wrapped & ~word
        if nonASCII { special |= word }
        return special & 0x8080_8080_8080_8080
    }

    /// The index of the first special byte in a 16-byte block's mask, or nil.
    @inlinable @inline(__always)
    static func firstSpecial(_ special: (UInt64, UInt64)) -> Int? {
        if special.0 != 0 { return special.0.trailingZeroBitCount &>> 3 }
        if special.1 != 0 { return 8 &+ special.1.trailingZeroBitCount &>> 3 }
        return nil
    }

    /// The position of the first byte at or after `start` in `source[0..<count]` that is a
    /// control character, `"`, `\` or non-ASCII (or `count`): the parser's string scan.
    @inlinable @inline(__always)
    static func skipPlain(_ source: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int {
        let raw = UnsafeRawPointer(source)
        var position = start
        while position &+ 16 <= count {
            let block = raw.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
            if let first = firstSpecial(specialBytes(block, quotesAndBackslashes: true, nonASCII: true)) { return position &+ first }
            position &+= 16
        }
        while position &+ 8 <= count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            let special = specialBytes(word, quotesAndBackslashes: true, nonASCII: true)
            if special != 0 { return position &+ special.trailingZeroBitCount &>> 3 }
            position &+= 8
        }
        while position < count {
            let byte = source[position]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte >= 0x80 { return position }
            position &+= 1
        }
        return position
    }

    /// Copies the leading bytes of `source[0..<length]` that need no escape in a JSON string to
    /// `target` and returns how many that is (`length` when none does). `quotesAndBackslashes:
    /// false` stops at control characters only. Writes only `target[0..<length]`; bytes past the
    /// returned count may be overwritten with copies of the source.
    @inlinable @inline(__always)
    static func copyPlain(
        _ target: UnsafeMutablePointer<UInt8>, _ source: UnsafePointer<UInt8>, _ length: Int, quotesAndBackslashes: Bool
    ) -> Int {
        let from = UnsafeRawPointer(source)
        let to = UnsafeMutableRawPointer(target)
        if length >= 16 {
            var position = 0
            while position &+ 16 <= length {
                let block = from.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
                to.storeBytes(of: block, toByteOffset: position, as: SIMD16<UInt8>.self)
                let special = specialBytes(block, quotesAndBackslashes: quotesAndBackslashes, nonASCII: false)
                if let first = firstSpecial(special) { return position &+ first }
                position &+= 16
            }
            guard position < length else { return length }
            // The last 16 bytes, overlapping bytes already found plain (so the first special one,
            // if any, is at or after `position`).
            let last = length &- 16
            let block = from.loadUnaligned(fromByteOffset: last, as: SIMD16<UInt8>.self)
            to.storeBytes(of: block, toByteOffset: last, as: SIMD16<UInt8>.self)
            let special = specialBytes(block, quotesAndBackslashes: quotesAndBackslashes, nonASCII: false)
            return firstSpecial(special).map { last &+ $0 } ?? length
        }
        if length >= 8 {
            // Two words, the second overlapping the first.
            var offset = 0
            while true {
                let word = from.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                to.storeBytes(of: word, toByteOffset: offset, as: UInt64.self)
                let special = specialBytes(UInt64(littleEndian: word), quotesAndBackslashes: quotesAndBackslashes, nonASCII: false)
                if special != 0 { return offset &+ special.trailingZeroBitCount &>> 3 }
                if offset == length &- 8 { return length }
                offset = length &- 8
            }
        }
        if length >= 4 {
            // Two half words, the second overlapping the first: one test on both.
            let head = from.loadUnaligned(as: UInt32.self)
            let tail = from.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self)
            let both = UInt64(UInt32(littleEndian: head)) | UInt64(UInt32(littleEndian: tail)) &<< 32
            if specialBytes(both, quotesAndBackslashes: quotesAndBackslashes, nonASCII: false) == 0 {
                to.storeBytes(of: head, as: UInt32.self)
                to.storeBytes(of: tail, toByteOffset: length &- 4, as: UInt32.self)
                return length
            }
        }
        var position = 0
        while position < length {
            let byte = source[position]
            if byte < 0x20 || (quotesAndBackslashes && (byte == 0x22 || byte == 0x5C)) { return position }
            target[position] = byte
            position &+= 1
        }
        return length
    }

    /// Lowercase hex digit of `nibble` (0…15).
    @inlinable
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }
}
