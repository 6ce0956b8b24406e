import CastTestSupport
import Testing
@testable import CastJSON

@Suite("JSON serialization and JSONObject")
struct JSONSerializationTests {
    @Test func compactOutputInStoredOrder() {
        let value: JSONValue = ["type": "PING", "z": 1, "a": [true, false, nil], "d": 1.5, "o": [:]]
        #expect(value.serialized() == #"{"type":"PING","z":1,"a":[true,false,null],"d":1.5,"o":{}}"#)
        #expect(JSONValue.array([]).serialized() == "[]")
    }

    @Test func stringEscaping() {
        #expect(JSONValue.string("a\"b\\c/d").serialized() == #""a\"b\\c/d""#)
        #expect(JSONValue.string("\n\r\t\u{08}\u{0C}").serialized() == #""\n\r\t\b\f""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{1F}\u{7F}").serialized() == "\"\\u0000\\u0001\\u001f\u{7F}\"")
        #expect(JSONValue.string("h\u{e9}llo \u{1F600}").serialized() == "\"h\u{e9}llo \u{1F600}\"")
        let key: JSONValue = ["we\"ird\nkey": 1]
        #expect(key.serialized() == #"{"we\"ird\nkey":1}"#)
    }

    @Test func numbers() {
        #expect(JSONValue.int(.min).serialized() == "-9223372036854775808")
        #expect(JSONValue.int(.max).serialized() == "9223372036854775807")
        #expect(JSONValue.int(0).serialized() == "0")
        #expect(JSONValue.double(1).serialized() == "1.0")
        #expect(JSONValue.double(0.1).serialized() == "0.1")
        #expect(JSONValue.double(-0.0).serialized() == "-0.0")
        #expect(JSONValue.double(1e300).serialized() == "1e+300")
        #expect(JSONValue.double(0.44999998807907104).serialized() == "0.44999998807907104")
    }

    @Test func nonFiniteDoublesBecomeNull() throws {
        let value: JSONValue = [.double(.nan), .double(.infinity), .double(-.infinity)]
        #expect(value.serialized() == "[null,null,null]")
        #expect(try JSONValue.parse(value.serialized()) == [nil, nil, nil])
    }

    @Test func serializedOutputReparsesEqual() throws {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let text = value.serialized()
            #expect(try JSONValue.parse(text) == value, "\(text)")
            #expect(value.serializedBytes() == Array(text.utf8))
        }
    }

    static func randomValue(depth: Int, using generator: inout SplitMix64) -> JSONValue {
        let pick = Int.random(in: 0..<(depth > 4 ? 6 : 8), using: &generator)
        switch pick {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64(bitPattern: generator.next()))
        case 3:
            let double = Double(bitPattern: generator.next())
            return .double(double.isFinite ? double : 0.5)
        case 4, 5:
            let scalars = (0..<Int.random(in: 0..<12, using: &generator)).map { _ -> Character in
                let choices: [UInt32] = [0x0, 0x1F, 0x22, 0x5C, 0x41, 0x7F, 0xE9, 0x20AC, 0x1F600, 0xFFFF]
                return Character(Unicode.Scalar(choices.randomElement(using: &generator)!)!)
            }
            return .string(String(scalars))
        case 6:
            return .array((0..<Int.random(in: 0..<4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var object = JSONObject()
            for index in 0..<Int.random(in: 0..<4, using: &generator) {
                object.append(key: "k\(index)\u{e9}", value: randomValue(depth: depth + 1, using: &generator))
            }
            return .object(object)
        }
    }

    @Test func objectSubscriptSetAndRemove() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = 10
        #expect(object.keys == ["a", "b"])
        #expect(object["a"] == .int(10))
        object["c"] = "x"
        #expect(object.keys == ["a", "b", "c"])
        object.append(key: "b", value: 3)
        #expect(object["b"] == .int(2))
        #expect(object.remove("b") == .int(2))
        #expect(object.keys == ["a", "c"])
        object["a"] = nil
        #expect(object.keys == ["c"])
        #expect(object.remove("missing") == nil)
        object.set("d", true)
        #expect(object.count == 2 && !object.isEmpty)
        #expect(object.contains(key: "d"))
        #expect(object.values == ["x", true])
        #expect(object.entries.map(\.key) == ["c", "d"])
        #expect(Array(object).map(\.key) == ["c", "d"])
    }

    @Test func objectEqualityIsOrderSensitive() {
        let ab: JSONObject = ["a": 1, "b": 2]
        let ba: JSONObject = ["b": 2, "a": 1]
        #expect(ab != ba)
        #expect(ab == JSONObject([(key: "a", value: 1), (key: "b", value: 2)]))
        #expect(Set([ab, ab, ba]).count == 2)
        #expect(ab.description == #"{"a":1,"b":2}"#)
    }

    @Test func typedAccessors() {
        let value: JSONValue = ["s": "x", "i": 3, "d": 2.5, "b": true, "a": [1], "o": ["k": nil]]
        #expect(value["s"]?.string == "x")
        #expect(value["i"]?.int == 3)
        #expect(value["d"]?.double == 2.5)
        #expect(value["b"]?.bool == true)
        #expect(value["a"]?.array == [1])
        #expect(value["o"]?.object?["k"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["s"]?["x"] == nil)
        #expect(value["a"]?[0] == .int(1))
        #expect(value["a"]?[1] == nil)
        #expect(JSONValue.string("x").bool == nil)
        #expect(value.description == value.serialized())
    }
}
