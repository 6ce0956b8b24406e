import CastCore
import CastLogging
import CastTestSupport
import CastlineLogs
import Testing

/// The prefilter may only say "no" where the full filter says no: checked over random records
/// and random filters (seeded), plus the cases it exists for.
@Suite struct LinePrefilterTests {
    static let classes = ["CastSession", "CastChannel.com.google.cast.media", "CastChannel.com.google.cast.tp.heartbeat",
                          "JobDriver", "Cast\"Odd", "DiscoveryManager"]
    static let types = ["LOAD", "MEDIA_STATUS", "PING", "GET_STATUS", "LO\\AD"]

    static func record(_ rng: inout SplitMix64) -> LogEntry {
        var attributes = JSONObject()
        if rng.next() % 2 == 0 { attributes.set("type", .string(types[Int(rng.next() % UInt64(types.count))])) }
        if rng.next() % 2 == 0 { attributes.set("requestId", .int(Int64(rng.next() % 20))) }
        if rng.next() % 2 == 0 { attributes.set("device", .string("dev-\(rng.next() % 3)")) }
        if rng.next() % 3 == 0 { attributes.set("namespace", .string("urn:x-cast:com.google.cast.media")) }
        if rng.next() % 3 == 0 { attributes.set("session", .string("s-\(rng.next() % 3)")) }
        let level = LogLevel(rawValue: UInt8(1 + rng.next() % 6))!
        return LogEntry(time: 1_795_000_000_000_000_000 + Int64(rng.next() % 1_000_000_000_000), level: level,
                        className: classes[Int(rng.next() % UInt64(classes.count))], body: "msg \(rng.next() % 5) dev-1",
                        attributes: attributes)
    }

    static func filter(_ rng: inout SplitMix64) -> LogFilter {
        var f = LogFilter()
        if rng.next() % 3 == 0 { f.minimumLevel = LogLevel(rawValue: UInt8(1 + rng.next() % 6)) }
        if rng.next() % 3 == 0 { f.classPatterns = [try! GlobPattern(["Cast*", "*media", "CastSession", "Cast\"*", "*"][Int(rng.next() % 5)])] }
        if rng.next() % 3 == 0 { f.messageType = types[Int(rng.next() % UInt64(types.count))] }
        if rng.next() % 4 == 0 { f.requestID = Int64(rng.next() % 20) }
        if rng.next() % 4 == 0 { f.device = ["dev-1", "dev-*", "Lobby"][Int(rng.next() % 3)] }
        if rng.next() % 4 == 0 { f.namespace = ["media", "urn:x-cast:com.google.cast.media", "heartbeat"][Int(rng.next() % 3)] }
        if rng.next() % 4 == 0 { f.session = "s-\(rng.next() % 3)" }
        if rng.next() % 4 == 0 { f.since = 1_795_000_000_000_000_000 + Int64(rng.next() % 1_000_000_000_000) }
        if rng.next() % 4 == 0 { f.until = 1_795_000_000_000_000_000 + Int64(rng.next() % 1_000_000_000_000) }
        if rng.next() % 5 == 0 { f.text = "dev-1" }
        return f
    }

    @Test func neverRejectsARecordTheFilterKeeps() throws {
        var rng = SplitMix64(seed: 0x5eed)
        var rejected = 0, kept = 0
        for _ in 0..<20_000 {
            let entry = Self.record(&rng)
            let filter = Self.filter(&rng)
            var line = Array(entry.json.serialized().utf8)
            let verdict = line.withUnsafeMutableBytes { LinePrefilter(filter).mayMatch(UnsafeRawBufferPointer($0)) }
            if filter.matches(entry) {
                kept += 1
                #expect(verdict, "prefilter rejected a match: \(entry.json.serialized()) for \(filter)")
            } else if !verdict {
                rejected += 1
            }
        }
        #expect(kept > 500 && rejected > 5000, "the property test exercises both sides (kept \(kept), rejected \(rejected))")
    }

    @Test func otherWritersAreAlwaysMaybe() {
        var filter = LogFilter()
        filter.messageType = "LOAD"
        filter.minimumLevel = .error
        var journal = Array(#"{"MESSAGE":"x","CASTLINE_CLASS":"A","PRIORITY":"7"}"#.utf8)
        #expect(journal.withUnsafeMutableBytes { LinePrefilter(filter).mayMatch(UnsafeRawBufferPointer($0)) })
    }
}

@Suite struct GlobLiteralTests {
    @Test func theLongestLiteralRunOfAGlob() {
        #expect(LinePrefilter.longestLiteral(inGlob: "dev-004*") == "dev-004")
        #expect(LinePrefilter.longestLiteral(inGlob: "*Lobby*TV?") == "Lobby")
        #expect(LinePrefilter.longestLiteral(inGlob: "Kitchen [0-9] speaker") == "Kitchen ", "ties: the first run")
        #expect(LinePrefilter.longestLiteral(inGlob: "a\\*bcd*") == "a*bcd")
        #expect(LinePrefilter.longestLiteral(inGlob: "*") == "")
        #expect(LinePrefilter.longestLiteral(inGlob: "plain") == "plain")
    }
}
