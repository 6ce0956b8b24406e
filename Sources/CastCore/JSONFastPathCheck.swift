/// Checks the JSON parser's C fast path (`CJSONTape`) against its Swift parser on one input:
/// used by the tests and by the `payload` fuzz target.
///
/// Pure function, thread-safe.
public enum JSONFastPathCheck {
    /// What the fast path did with an input.
    public enum Outcome: Equatable, Sendable {
        /// It wrote a tape, and the tape equals the Swift parser's entry for entry.
        case agreed(entries: Int)
        /// It declined (the Swift parser decides, as it does for every input).
        case declined
        /// It wrote a tape that differs from the Swift parser's, or accepted what Swift rejects.
        case disagreed(String)
    }

    /// Parses `bytes` with both parsers and compares their tapes.
    public static func compare(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        let buffer = bytes.bindMemory(to: UInt8.self)
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .declined }
        let fast = UnsafeMutablePointer<JSONTapeEntry>.allocate(capacity: buffer.count)
        defer { fast.deallocate() }
        guard JSONParser.fastParse(base, buffer.count, into: fast, capacity: buffer.count) == .parsed else { return .declined }
        let reference = JSONParser.withDocument(buffer, fastPath: false) { root -> [JSONTapeEntry] in
            let end = root.document.pointee.skip(0)
            return Array(UnsafeBufferPointer(start: root.document.pointee.tape, count: end))
        }
        switch reference {
        case .failure(let error):
            return .disagreed("the fast path accepted what the parser rejects: \(error)")
        case .success(let entries):
            // The fast tape's length: the root's end, as for the parser's.
            let fastEnd = JSONTapeDocument(tape: fast, input: base, scratch: nil, table: JSONStringTable.shared).skip(0)
            if fastEnd != entries.count { return .disagreed("fast tape has \(fastEnd) entries, the parser's \(entries.count)") }
            for (index, entry) in entries.enumerated() {
                let other = fast[index]
                if other.header != entry.header || other.payload != entry.payload {
                    return .disagreed(
                        "entry \(index): fast (header 0x\(String(other.header, radix: 16)), payload 0x\(String(other.payload, radix: 16)))"
                            + " vs parser (header 0x\(String(entry.header, radix: 16)), payload 0x\(String(entry.payload, radix: 16)))")
                }
            }
            return .agreed(entries: entries.count)
        }
    }
}
