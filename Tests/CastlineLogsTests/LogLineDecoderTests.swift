import CastCore
import CastLogging
@testable import CastlineLogs
import Testing

@Suite struct LogLineDecoderTests {
    static let castlineLine = #"{"time":"2026-11-22T10:15:30.123456789Z","time_unix_nano":1795342530123456789,"severity_number":13,"severity_text":"WARN","level":"warning","class":"CastSession","body":"didSuspend(heartbeat timeout)","attributes":{"device":"d1","localSession":1,"event":"didSuspend"},"code.filepath":"CastSender/CastSession.swift","code.lineno":181,"code.function":"emit(_:)"}   "#

    @Test func castlineRecordsDecodeWithTheirTypes() throws {
        let entry = try LogLineDecoder.decode(Self.castlineLine).get()
        #expect(entry.time == 1_795_342_530_123_456_789)
        #expect(entry.level == .warning && entry.className == "CastSession" && entry.body == "didSuspend(heartbeat timeout)")
        #expect(entry.attributes["localSession"] == .int(1) && entry.text("localSession") == "1" && entry.device == "d1")
        #expect(entry.file == "CastSender/CastSession.swift" && entry.line == 181 && entry.function == "emit(_:)")
        // Writing it back gives the same record.
        let again = try LogLineDecoder.decode(entry.json.serialized()).get()
        #expect(again == LogEntry(time: entry.time, level: entry.level, className: entry.className, body: entry.body,
                                  attributes: entry.attributes, file: entry.file, line: entry.line, function: entry.function,
                                  origin: again.origin))
    }

    @Test func laterSchemaVersionsAndSeverityOnlyRecordsStillRead() throws {
        let newer = try LogLineDecoder.decode(#"{"time":"2026-11-22T10:15:30Z","severity_number":17,"class":"X","body":"b","schema":2,"resource":{"pid":4}}"#).get()
        #expect(newer.level == .error && newer.time == LogTime.parse("2026-11-22T10:15:30Z"))
    }

    @Test func journalEntriesComeBackWithCastlineNames() throws {
        let line = #"{"__CURSOR":"s=1","__REALTIME_TIMESTAMP":"1795342530123456","PRIORITY":"7","SYSLOG_IDENTIFIER":"castline","MESSAGE":"→ LOAD #4","CASTLINE_CLASS":"CastChannel.com.google.cast.media","CASTLINE_LEVEL":"verbose","CASTLINE_TIME_NS":"1795342530123456789","CODE_FILE":"a.swift","CODE_LINE":"12","REQUEST_ID":"4","TYPE":"LOAD","DEVICE_NAME":"Lobby TV","_PID":"77"}"#
        let entry = try LogLineDecoder.decode(line).get()
        #expect(entry.level == .verbose, "CASTLINE_LEVEL tells verbose from debug (PRIORITY 7 for both)")
        #expect(entry.time == 1_795_342_530_123_456_789 && entry.className == "CastChannel.com.google.cast.media")
        #expect(entry.integer("requestId") == 4 && entry.text("type") == "LOAD" && entry.text("deviceName") == "Lobby TV")
        #expect(entry.attributes["pid"] == nil, "journal trusted fields are not attributes")
        #expect(entry.line == 12)
        let old = try LogLineDecoder.decode(#"{"__REALTIME_TIMESTAMP":"1795342530123456","PRIORITY":"4","MESSAGE":[104,105],"CASTLINE_CLASS":"A"}"#).get()
        #expect(old.level == .warning && old.body == "hi" && old.time == 1_795_342_530_123_456_000)
    }

    @Test func journalFieldsComeBackWithTheTypesTheSinkListed() throws {
        let line = #"{"__REALTIME_TIMESTAMP":"1795342530123456","PRIORITY":"6","MESSAGE":"m","CASTLINE_CLASS":"CastSession","CASTLINE_LEVEL":"info","PID":"4242","ROLE":"daemon","LATENCY":"0.25","RESUMED":"false","SESSION":"17","DEVICE":"123","BROKEN":"x1","CASTLINE_TYPES":"PID:i,LATENCY:d,RESUMED:b,BROKEN:i"}"#
        let entry = try LogLineDecoder.decode(line).get()
        #expect(entry.attributes["pid"] == .int(4242) && entry.attributes["role"] == "daemon")
        #expect(entry.attributes["latency"] == .double(0.25) && entry.attributes["resumed"] == .bool(false))
        // Not listed: text, even when it looks like a number (a device named "123" stays a name).
        #expect(entry.attributes["device"] == "123" && entry.attributes["session"] == "17")
        #expect(entry.attributes["broken"] == "x1", "a listed value that does not parse stays as it is")
        #expect(entry.attributes["castlineTypes"] == nil)
        #expect(LogLineDecoder.fieldTypes("A:i,B_C:d,,bad,D:") == ["A": "i", "B_C": "d"])
    }

    @Test func linesThatAreNotRecordsSayWhy() {
        #expect(LogLineDecoder.decode("      ") == .failure(.blank))
        #expect(LogLineDecoder.decode("plain text") == .failure(.notJSON))
        #expect(LogLineDecoder.decode(#"{"time":"2026-11-22T10:15:30Z","class":"A","bo"#) == .failure(.notJSON))
        #expect(LogLineDecoder.decode(#"{"hello":"world"}"#) == .failure(.unknownSchema))
        #expect(LogLineDecoder.decode("[1,2]") == .failure(.notJSON))
        // A realtime stamp whose nanoseconds overflow Int64 is no time (found by the logline fuzzer).
        #expect(LogLineDecoder.decode(#"{"__REALTIME_TIMESTAMP":"9223372036854775807","PRIORITY":"4","MESSAGE":"x","CASTLINE_CLASS":"A"}"#) == .failure(.unknownSchema))
    }

    @Test func rfc3339RoundTripsAndAcceptsOffsets() {
        let t: Int64 = 1_795_342_530_123_456_789
        #expect(LogTime.rfc3339(t) == "2026-11-22T10:15:30.123456789Z")
        #expect(LogTime.parse("2026-11-22T10:15:30.123456789Z") == t)
        #expect(LogTime.parse("2026-11-22T11:15:30.123456789+01:00") == t)
        #expect(LogTime.parse("2026-11-22") == 1_795_305_600_000_000_000)
        #expect(LogTime.rfc3339(0, fractionDigits: 3) == "1970-01-01T00:00:00.000Z")
        #expect(LogTime.rfc3339(-1_000_000_000, fractionDigits: 0) == "1969-12-31T23:59:59Z")
        #expect(LogTime.parse("3026-11-22T04:16:17Z") == nil, "past 2262: does not fit Int64 nanoseconds (found by the fuzzer)")
        #expect(LogTime.rfc3339(Int64.min, fractionDigits: 0).hasSuffix("Z"))
        for bad in ["2026-13-01", "2026-11-22T25:00:00Z", "2026-11-22T10:15:30", "yesterday", "2026-11-22T10:15:30.Z"] {
            #expect(LogTime.parse(bad) == nil, "\(bad)")
        }
    }
}

extension Result where Success == LogEntry, Failure == LogLineProblem {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.failure(let a), .failure(let b)): return a == b
        case (.success(let a), .success(let b)): return a == b
        default: return false
        }
    }
}
