@testable import CastJSON
import Testing

@Suite("Interned strings and the byte compare under them")
struct StringTableTests {
    /// Every length around the 4- and 8-byte compares, a difference at every position: equal only
    /// when the bytes are.
    @Test func bytesCompareEqualExactlyWhenEqual() {
        for length in 0...40 {
            let a = (0..<length).map { UInt8(truncatingIfNeeded: 0x41 &+ $0) }
            #expect(a.withUnsafeBufferPointer { x in a.withUnsafeBufferPointer { memcmpBytes(x.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.baseAddress ?? UnsafePointer(bitPattern: 1)!, length) } })
            for position in 0..<length {
                var b = a
                b[position] ^= 0x20
                let equal = a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { memcmpBytes(x.baseAddress!, $0.baseAddress!, length) } }
                #expect(!equal, "length \(length), difference at \(position)")
            }
        }
    }

    @Test func everyKnownStringIsFoundAndNothingElse() {
        let table = JSONStringTable.shared
        for string in JSONStringTable.knownStrings {
            var copy = string
            let found = copy.withUTF8 { table.lookup($0.baseAddress!, $0.count) }
            #expect(found == string)
            var longer = string + "x"
            #expect(longer.withUTF8 { table.lookup($0.baseAddress!, $0.count) } == nil)
            guard string.utf8.count > 1 else { continue }
            var shorter = String(string.dropLast())
            #expect(JSONStringTable.knownStrings.contains(shorter) || shorter.withUTF8 { table.lookup($0.baseAddress!, $0.count) } == nil)
        }
        let namespace = Array("urn:x-cast:com.google.cast.media".utf8)
        #expect(namespace.withUnsafeBytes { String.castInterned($0) } == "urn:x-cast:com.google.cast.media")
        #expect(Array("urn:x-cast:com.google.cast.medib".utf8).withUnsafeBytes { String.castInterned($0) } == nil)
    }
}
