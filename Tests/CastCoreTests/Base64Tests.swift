import CastCore
import Testing

@Suite struct Base64Tests {
    @Test func roundTripsEveryLengthAndByte() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes, "length \(length)")
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(all)) == all)
    }

    @Test func knownVectorsAndRefusals() {
        // RFC 4648 §10.
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.decode("Zm9vYg==") == Array("foob".utf8))
        #expect(Base64.decode("Zm9vYg") == Array("foob".utf8), "padding is optional")
        #expect(Base64.decode("Zm9v!mFy") == nil, "not in the alphabet")
        #expect(Base64.decode("Zm=9v") == nil, "data after padding")
        #expect(Base64.decode("Z") == nil, "a lone sextet is no byte")
    }
}
