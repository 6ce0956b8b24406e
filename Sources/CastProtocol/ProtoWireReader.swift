/// The wire types of the protobuf binary format. 6 and 7 do not exist: a tag carrying one is
/// malformed.
public enum ProtoWireType: UInt8, Sendable {
    case varint = 0, fixed64 = 1, lengthDelimited = 2, startGroup = 3, endGroup = 4, fixed32 = 5
}

/// A field's key: its number and wire type.
public struct ProtoTag: Sendable, Equatable {
    public let field: UInt64
    public let wireType: ProtoWireType

    public init(field: UInt64, wireType: ProtoWireType) {
        self.field = field
        self.wireType = wireType
    }
}

/// Bytes that are not the protobuf binary format.
public enum ProtoWireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input ends inside a varint, a fixed-size field or a length-delimited field.
    case truncated(String)
    case varintTooLong
    case tagTooLarge(UInt64)
    case fieldNumberZero
    case unsupportedWireType(UInt64, field: UInt64)
    /// Groups and messages nested deeper than ``ProtoWireReader/depthLimit``.
    case nestedTooDeep
    case endGroupWithoutStart(field: UInt64)
    case groupNotClosed(field: UInt64)
    case invalidUTF8(field: UInt64)

    public var description: String {
        switch self {
        case .truncated(let what): return "truncated \(what)"
        case .varintTooLong: return "varint longer than 10 bytes"
        case .tagTooLarge(let key): return "tag \(key) does not fit 32 bits"
        case .fieldNumberZero: return "invalid field number 0"
        case .unsupportedWireType(let type, let field): return "unsupported wire type \(type) in field \(field)"
        case .nestedTooDeep: return "groups and messages nested deeper than \(ProtoWireReader.depthLimit)"
        case .endGroupWithoutStart(let field): return "end of group \(field) without its start"
        case .groupNotClosed(let field): return "group \(field) is not closed"
        case .invalidUTF8(let field): return "field \(field) is not valid UTF-8"
        }
    }
}

/// Reads the protobuf binary format (proto2) from raw bytes, with SwiftProtobuf's rules for what
/// is malformed, so that the hand-written decoders built on it (``CastMessageWireReader``, the
/// device-auth messages) accept and refuse what the generated types do (tests and fuzz targets
/// compare them):
///
/// - a message's field tag is at most 5 bytes and below 2^32, a tag inside an unknown group any
///   varint below `UInt32.max`; field number 0 and wire types 6 and 7 are malformed;
/// - a varint is at most 10 bytes (bits beyond 64 are dropped);
/// - unknown groups are skipped through their matching end tag, and groups and nested messages
///   together nest at most ``depthLimit`` deep, the outermost message included.
///
/// The reader borrows `bytes`: it and every slice it returns are valid only while they are.
public struct ProtoWireReader {
    /// SwiftProtobuf's default message depth limit.
    public static let depthLimit = 100

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    /// Groups and messages that may still open inside this message (SwiftProtobuf's recursion
    /// budget).
    private let depthBudget: Int

    /// A reader over a whole message, which takes one level of ``depthLimit``.
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.init(bytes, depthBudget: Self.depthLimit - 1)
    }

    private init(_ bytes: UnsafeRawBufferPointer, depthBudget: Int) {
        self.bytes = bytes
        self.depthBudget = depthBudget
    }

    public var isAtEnd: Bool { index >= bytes.count }

    /// The next field's tag. Call only when not ``isAtEnd``.
    public mutating func tag() throws(ProtoWireError) -> ProtoTag {
        // One byte (fields 1–15, nearly every tag Cast sends) without the general varint loop:
        // ~270 fewer instructions per decoded MEDIA_STATUS.
        if index < bytes.count, bytes[index] < 0x80 {
            index += 1
            return try Self.validated(UInt64(bytes[index - 1]))
        }
        let start = index
        let key = try varint()
        // SwiftProtobuf reads a message's tags with an unrolled 5-byte varint whose last byte
        // may hold 4 bits.
        guard index - start <= 5, key <= UInt64(UInt32.max) else { throw .tagTooLarge(key) }
        return try Self.validated(key)
    }

    public mutating func varint() throws(ProtoWireError) -> UInt64 {
        guard index < bytes.count else { throw .truncated("varint") }
        let first = bytes[index]
        index += 1
        if first < 0x80 { return UInt64(first) }
        var value = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        while true {
            guard index < bytes.count else { throw .truncated("varint") }
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) &<< shift
            if byte < 0x80 { return value }
            shift += 7
            if shift > 63 { throw .varintTooLong }
        }
    }

    /// A length-delimited field's bytes (a slice of the input).
    public mutating func lengthDelimited() throws(ProtoWireError) -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(bytes.count - index) else { throw .truncated("length-delimited field") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + Int(length))])
        index += Int(length)
        return slice
    }

    /// A length-delimited field read as a nested message, which takes one more level of
    /// ``depthLimit``.
    public mutating func message() throws(ProtoWireError) -> ProtoWireReader {
        guard depthBudget > 0 else { throw .nestedTooDeep }
        return ProtoWireReader(try lengthDelimited(), depthBudget: depthBudget - 1)
    }

    /// Skips the value of a field the caller does not read (unknown, or a known number with
    /// another wire type, which proto2 keeps as an unknown field); a group through its matching
    /// end tag, nested groups too.
    public mutating func skip(_ tag: ProtoTag) throws(ProtoWireError) {
        var open: [UInt64] = []   // field numbers of the groups being skipped
        var tag = tag
        while true {
            switch tag.wireType {
            case .varint: _ = try varint()
            case .fixed64: try advance(8, "fixed64 field")
            case .lengthDelimited: _ = try lengthDelimited()
            case .startGroup:
                guard open.count < depthBudget else { throw .nestedTooDeep }
                open.append(tag.field)
            case .endGroup:
                guard open.last == tag.field else { throw .endGroupWithoutStart(field: tag.field) }
                open.removeLast()
            case .fixed32: try advance(4, "fixed32 field")
            }
            guard let innermost = open.last else { return }
            guard !isAtEnd else { throw .groupNotClosed(field: innermost) }
            // Inside a group SwiftProtobuf reads tags with its general varint reader.
            let key = try varint()
            guard key < UInt64(UInt32.max) else { throw .tagTooLarge(key) }
            tag = try Self.validated(key)
        }
    }

    private mutating func advance(_ count: Int, _ what: String) throws(ProtoWireError) {
        guard bytes.count - index >= count else { throw .truncated(what) }
        index += count
    }

    private static func validated(_ key: UInt64) throws(ProtoWireError) -> ProtoTag {
        guard let wireType = ProtoWireType(rawValue: UInt8(key & 7)) else {
            throw .unsupportedWireType(key & 7, field: key >> 3)
        }
        guard key >> 3 > 0 else { throw .fieldNumberZero }
        return ProtoTag(field: key >> 3, wireType: wireType)
    }
}
