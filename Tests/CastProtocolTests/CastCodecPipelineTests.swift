import CastCore
import CastLogging
import CastProtocol
import CastProtoReference
import CastTestSupport
import NIOCore
import NIOEmbedded
import Testing

@Suite struct CastCodecPipelineTests {
    func makeChannel(_ system: LogSystem) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addCastMessageCodec(logSystem: system)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8009)).wait()
        return channel
    }

    @Test func messagesRoundTripThroughTheWholeStack() throws {
        let (system, _) = try MemoryLogSink.makeSystem()
        let channel = try makeChannel(system)
        var wire = channel.allocator.buffer(capacity: 0)
        for message in CastMessageTests.samples {
            try channel.writeOutbound(message)
            var bytes = try #require(try channel.readOutbound(as: ByteBuffer.self))
            wire.writeBuffer(&bytes)
        }
        // Feed the bytes back one at a time.
        var received: [CastMessage] = []
        while let byte = wire.readSlice(length: 1) {
            try channel.writeInbound(byte)
            while let m = try channel.readInbound(as: CastMessage.self) { received.append(m) }
        }
        #expect(received == CastMessageTests.samples)
        #expect(channel.isActive)
        _ = try channel.finish()
        system.shutdown()
    }

    @Test(arguments: [[0x00, 0x01, 0x00, 0x01] as [UInt8], [0, 0, 0, 0]])
    func badLengthClosesTheChannelWithATypedErrorAndLogsPeerAndSize(prefix: [UInt8]) throws {
        let (system, sink) = try MemoryLogSink.makeSystem()
        let channel = try makeChannel(system)
        #expect(throws: CastFrameError.self) { try channel.writeInbound(ByteBuffer(bytes: prefix)) }
        #expect(!channel.isActive)
        system.flush()
        let record = try #require(sink.records.first { $0.className == "CastFrameDecoder" })
        #expect(record.level == .error)
        #expect(record.fields["peer"] == .string("127.0.0.1:8009"))
        let expectedSize: Int64 = prefix == [0, 0, 0, 0] ? 0 : 65_537
        #expect(record.fields["size"] == .int(expectedSize))
        #expect(record.fields["limit"] == .int(65_536))
        // Reported once: the close that follows does not log the same bytes as a cut-off frame.
        #expect(sink.records.filter { $0.className == "CastFrameDecoder" }.count == 1)
        system.shutdown()
    }

    @Test func undecodableBodyIsReportedAndTheConnectionGoesOn() throws {
        let (system, sink) = try MemoryLogSink.makeSystem()
        let channel = try makeChannel(system)
        let garbage: [UInt8] = [0, 0, 0, 3, 0xFF, 0xFF, 0xFF]
        #expect(throws: CastMessageDecodingError.self) { try channel.writeInbound(ByteBuffer(bytes: garbage)) }
        #expect(channel.isActive)
        let good = CastMessageTests.samples[0]
        try channel.writeOutbound(good)
        let bytes = try #require(try channel.readOutbound(as: ByteBuffer.self))
        try channel.writeInbound(bytes)
        #expect(try channel.readInbound(as: CastMessage.self) == good)
        system.flush()
        let record = try #require(sink.records.first { $0.className == "CastMessageCodec" })
        #expect(record.level == .warning)
        #expect(record.fields["size"] == .int(3))
        _ = try channel.finish()
        system.shutdown()
    }

    @Test("a message goes out as one buffer: its length prefix, then SwiftProtobuf's bytes of it")
    func messageLeavesAsOneFrame() throws {
        let (system, _) = try MemoryLogSink.makeSystem()
        let channel = try makeChannel(system)
        for message in CastMessageTests.samples {
            try channel.writeOutbound(message)
            let frame = try #require(try channel.readOutbound(as: ByteBuffer.self))
            let body = Array(message.serializedBodyWithSwiftProtobuf().readableBytesView)
            #expect(Array(frame.readableBytesView) == [0, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body)
            #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        }
        _ = try channel.finish()
        system.shutdown()
    }

    @Test func oversizedOutgoingBodyFailsTheWriteAndSendsNothing() throws {
        let (system, _) = try MemoryLogSink.makeSystem()
        let channel = try makeChannel(system)
        let big = CastMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .media,
                              payload: .string(String(repeating: "x", count: 70_000)))
        #expect(throws: CastFrameError.self) { try channel.writeOutbound(big) }
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        #expect(channel.isActive)
        _ = try channel.finish()
        system.shutdown()
    }
}

@Suite struct CastTrafficLogTests {
    @Test func everyMessageBecomesARecordOfItsNamespaceClass() throws {
        let (system, sink) = try MemoryLogSink.makeSystem("info,CastChannel.*:debug,CastChannel.*media:verbose")
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addCastMessageCodec(logSystem: system)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8009)).wait()
        let ping = CastMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .heartbeat, payload: .string(#"{"type":"PING"}"#))
        try channel.writeOutbound(ping)
        let status = CastMessage(sourceID: "abc", destinationID: "*", namespace: .media,
                                 payload: .string(#"{"type":"MEDIA_STATUS","requestId":4,"status":[]}"#))
        var wire = try #require(try channel.readOutbound(as: ByteBuffer.self))
        try channel.writeOutbound(status)
        var second = try #require(try channel.readOutbound(as: ByteBuffer.self))
        wire.writeBuffer(&second)
        try channel.writeInbound(wire)
        system.flush()
        let records = sink.records.filter { $0.className.hasPrefix("CastChannel.") }
        #expect(records.map(\.className) == ["CastChannel.com.google.cast.tp.heartbeat", "CastChannel.com.google.cast.media",
                                             "CastChannel.com.google.cast.tp.heartbeat", "CastChannel.com.google.cast.media"])
        #expect(records.map(\.message) == ["→ receiver-0 PING (15 B)", "→ * MEDIA_STATUS #4 (49 B)",
                                           "← sender-0 PING (15 B)", "← abc MEDIA_STATUS #4 (49 B)"])
        #expect(records[0].fields["payload"] == nil)  // heartbeat class at debug: no payload
        #expect(records[1].fields["payload"] == .string(#"{"type":"MEDIA_STATUS","requestId":4,"status":[]}"#))
        #expect(records[3].fields["direction"] == "in")
        #expect(records[3].fields["requestId"] == .int(4))
        #expect(records[3].fields["peer"] == "127.0.0.1:8009")
        _ = try channel.finish()
        system.shutdown()
    }
}
