import CastCore
import CastLogging
import CastProtocol
import CastProtoReference
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Accepts records and does nothing with them, counting only.
final class NullSink: LogSink {
    let name = "null"
    private let count = Atomic<Int>(0)
    func write(_ records: [LogRecord]) { count.add(records.count, ordering: .relaxed) }
    var received: Int { count.load(ordering: .relaxed) }
}

let only = CommandLine.arguments.dropFirst().first
let runner = BenchmarkRunner(only: only)

/// True when a group may hold a selected benchmark.
func wanted(_ group: String) -> Bool { only.map { group.hasPrefix($0) || $0.hasPrefix(group) } ?? true }

// 1. A log statement below its class threshold: cached compare, message never built.
if wanted("log.disabled") {
    let system = LogSystem(filter: try! LoggerFilter(parsing: "info,*Session:warning,CastChannel.*:none"))
    system.addSink(NullSink())
    let log = Logger(class: "CastSession", system: system)
    var i = 0
    runner.nanosPerOp("log.disabled", iterations: 200_000_000) { n in
        for _ in 0..<n {
            log.debug("heartbeat \(i)", ["seq": .int(i)])
            i &+= 1
        }
    }
    system.shutdown()
}

// 2. An enabled record: filter, record built (time, strings, fields), queued to a null sink
//    whose worker thread drains it. Total time per record includes the final flush.
if wanted("log.enabled") {
    for (label, withFields) in [("log.enabled.nullsink", false), ("log.enabled.fields3.nullsink", true)] {
        let system = LogSystem(filter: LoggerFilter(minimumLevel: .info))
        let sink = NullSink()
        system.addSink(sink, queueCapacity: 65_536)
        let log = Logger(class: "CastSession", system: system)
        runner.nanosPerOp(label, iterations: 1_000_000) { n in
            if withFields {
                for i in 0..<n { log.info("media status received", ["device": "living-room", "requestId": .int(i), "state": "PLAYING"]) }
            } else {
                for _ in 0..<n { log.info("media status received") }
            }
            system.flush()
        }
        guard runner.selected(label) else { system.shutdown(); continue }
        let dropped = system.sinkStatistics[0].dropped
        print("{\"name\":\"\(label).dropped\",\"value\":\(dropped),\"unit\":\"records\",\"received\":\(sink.received)}")
        system.shutdown()
    }
}

// 3. Decode path for a ~200-byte MEDIA_STATUS: frame split + protobuf parse + payload model.
if wanted("decode") {
    let json = #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":1,"playerState":"PLAYING","currentTime":12.5,"playbackRate":1,"supportedMediaCommands":12303,"volume":{"level":1,"muted":false},"media":{"contentId":"http://192.168.1.5/a.mp4","streamType":"BUFFERED","contentType":"video/mp4"}}]}"#
    let message = CastMessage(sourceID: "9f0c1a2e-7d1e-4c55-9d1f-31ab5d0e7c11", destinationID: "*", namespace: .media, payload: .string(json))
    let body = message.serializedBody()
    var frame = ByteBuffer()
    frame.writeInteger(UInt32(body.readableBytes), endianness: .big)
    var bodyCopy = body
    frame.writeBuffer(&bodyCopy)
    var decoded = 0
    runner.opsPerSecond("decode.media_status", unit: "messages/s", iterations: 500_000) { n in
        var machine = FrameDecodingStateMachine()
        var decoder = CastMessageDecoder()  // what CastMessageCodec does per connection
        for _ in 0..<n {
            machine.feed(frame)
            guard let b = try! machine.nextFrame(),
                  let m = try? decoder.decode(b),
                  case .string(let text) = m.payload,
                  case .media(.mediaStatus) = try! CastPayload.decode(namespace: m.namespace, utf8: text)
            else { fatalError("decode failed") }
            decoded &+= 1
        }
    }
    print("{\"name\":\"decode.media_status.bytes\",\"value\":\(json.utf8.count),\"unit\":\"payload bytes\",\"frame\":\(frame.readableBytes)}")
    // The same, split by stage.
    runner.nanosPerOp("decode.stage.frame+protobuf", iterations: 500_000) { n in
        var machine = FrameDecodingStateMachine()
        var decoder = CastMessageDecoder()
        for _ in 0..<n {
            machine.feed(frame)
            _ = try! decoder.decode(machine.nextFrame()!)
        }
    }
    runner.nanosPerOp("decode.stage.json+model", iterations: 500_000) { n in
        for _ in 0..<n { _ = try! CastPayload.decode(namespace: .media, utf8: json) }
    }
}

// 3b. Encode path for a LOAD (~480-byte payload): the body as CastMessageCodec writes it (the
//     wire writer; the codec adds the length prefix into the same buffer) against the generated
//     SwiftProtobuf type it replaced (which the frame encoder then copied behind the prefix).
if wanted("encode") {
    let json = #"{"type":"LOAD","requestId":7,"sessionId":"6d1c2f3e-9a8b-4c7d-8e6f-5a4b3c2d1e0f","media":{"contentId":"https://media.example/castline/bench.mp4","contentUrl":"https://media.example/castline/bench.mp4","streamType":"BUFFERED","contentType":"video/mp4","metadata":{"metadataType":0,"title":"castline bench","images":[{"url":"https://media.example/castline/poster.jpg"}]},"duration":596},"autoplay":true,"currentTime":0,"activeTrackIds":[],"playbackRate":1}"#
    let message = CastMessage(sourceID: "sender-0", destinationID: "6d1c2f3e-9a8b-4c7d-8e6f-5a4b3c2d1e0f", namespace: .media, payload: .string(json))
    var bytes = 0
    runner.nanosPerOp("encode.load.wire_writer", iterations: 1_000_000) { n in
        for _ in 0..<n { bytes &+= message.serializedBody().readableBytes }
    }
    runner.nanosPerOp("encode.load.swiftprotobuf_and_copy", iterations: 1_000_000) { n in
        for _ in 0..<n {
            var body = message.serializedBodyWithSwiftProtobuf()
            var frame = ByteBuffer()
            frame.reserveCapacity(4 + body.readableBytes)
            frame.writeInteger(UInt32(body.readableBytes), endianness: .big)
            frame.writeBuffer(&body)
            bytes &+= frame.readableBytes
        }
    }
    print("{\"name\":\"encode.load.bytes\",\"value\":\(message.serializedBody().readableBytes),\"unit\":\"body bytes\",\"checksum\":\(bytes % 7)}")
}

// 4. The glob matcher on the pathological pattern: 5,000-character `*a*a…` vs 5,000 characters.
if wanted("glob") {
    let glob = try! GlobPattern(String(repeating: "*a", count: 2500))
    let hit = String(repeating: "a", count: 5000)
    let miss = String(repeating: "a", count: 4999) + "b"
    var matched = 0
    runner.nanosPerOp("glob.star_a_5000.match", iterations: 2_000) { n in
        for _ in 0..<n where glob.matches(hit) { matched += 1 }
    }
    runner.nanosPerOp("glob.star_a_5000.miss", iterations: 2_000) { n in
        for _ in 0..<n where glob.matches(miss) { matched += 1 }
    }
    let typical = try! GlobPattern("CastChannel.*heartbeat")
    runner.nanosPerOp("glob.typical", iterations: 2_000_000) { n in
        for _ in 0..<n where typical.matches("CastChannel.com.google.cast.tp.heartbeat") { matched += 1 }
    }
}
