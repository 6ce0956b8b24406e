// DASH MPDs (ISO/IEC 23009-1): liveness, video sizes, codecs and CICP transfer properties,
// read with a small tolerant tag scanner, not a full XML parser. Pure stdlib: no Foundation.

/// Why a body is not a DASH manifest.
enum DASHParseError: Error, Equatable, Sendable {
    /// No `<MPD>` (or `<prefix:MPD>`) element was found.
    case noMPDElement

    var message: String { "not a DASH manifest: no <MPD> element" }
}

/// What a Representation's (or its AdaptationSet's) mimeType / contentType / codecs say it is.
enum DASHMediaKind: String, Sendable { case video, audio, text, image, unknown }

/// A Representation with the attributes it inherits from its AdaptationSet already applied.
struct DASHRepresentation: Equatable, Sendable {
    var id: String?
    var bandwidth: Int?
    /// Own `width`/`height`, else the AdaptationSet's `width`/`height`.
    var width: Int?
    var height: Int?
    /// `codecs` (own, else the AdaptationSet's), split.
    var codecs: [String] = []
    /// `supplementalCodecs` (SCTE 214, any namespace prefix), split on commas and spaces.
    var supplementalCodecs: [String] = []
    var mimeType: String?
    var contentType: String?
    /// CICP TransferCharacteristics from a Supplemental/EssentialProperty on the Representation,
    /// else on its AdaptationSet.
    var transferCharacteristics: Int?
    var kind: DASHMediaKind = .unknown
}

/// An AdaptationSet and its (resolved) Representations.
struct DASHAdaptationSet: Equatable, Sendable {
    var id: String?
    var maxWidth: Int?
    var maxHeight: Int?
    var transferCharacteristics: Int?
    var representations: [DASHRepresentation] = []
}

/// The parts of an MPD that format analysis needs.
struct DASHManifest: Equatable, Sendable {
    /// The MPD `type` attribute lowercased (`static`, `dynamic`), nil when absent.
    var type: String?
    /// AdaptationSets of all Periods, in document order. Representations outside any
    /// AdaptationSet (malformed) land in a final set without attributes.
    var adaptationSets: [DASHAdaptationSet] = []
    /// True when the document ends before its markup or its elements are closed.
    var isTruncated = false
    var warnings: [String] = []

    /// `LIVE` for `type="dynamic"`, else `BUFFERED` (static, absent or unknown).
    var streamType: String { type == "dynamic" ? "LIVE" : "BUFFERED" }

    /// The scheme of the CICP transfer-characteristics descriptor.
    static let transferScheme = "urn:mpeg:mpegb:cicp:transfercharacteristics"

    /// Parses MPD bytes (UTF-8).
    static func parse<C: Collection>(bytes: C) throws(DASHParseError) -> DASHManifest where C.Element == UInt8 {
        var builder = Builder()
        let complete = XMLTagScanner.scan(Array(bytes)) { builder.handle($0) }
        guard builder.sawMPD else { throw .noMPDElement }
        let open = builder.stack.map { "<\($0.name)>" }
        builder.closeAll()
        var manifest = builder.manifest
        if !complete || !open.isEmpty {
            manifest.isTruncated = true
            let detail = open.isEmpty ? "ends inside markup" : "unclosed " + open.joined(separator: ", ")
            manifest.warnings.append("manifest appears truncated (\(detail))")
        }
        return manifest
    }

    /// Parses MPD text.
    static func parse(_ text: String) throws(DASHParseError) -> DASHManifest {
        try parse(bytes: Array(text.utf8))
    }

    /// Turns scanner events into adaptation sets, keeping open elements on a stack.
    private struct Builder {
        struct Frame {
            var name: String
            var attributes: [String: String]
            var transfer: Int?
            var representations: [Frame] = []
        }

        var manifest = DASHManifest()
        var stack: [Frame] = []
        var orphans: [DASHRepresentation] = []
        var sawMPD = false

        mutating func handle(_ event: XMLEvent) {
            switch event {
            case .start(let name, let attributes, let selfClosing):
                if name == "MPD", !sawMPD {
                    sawMPD = true
                    manifest.type = attributes["type"].map { $0.trimmedWhitespace.lowercased() }
                }
                if name == "SupplementalProperty" || name == "EssentialProperty",
                   attributes["schemeIdUri"]?.trimmedWhitespace.lowercased() == DASHManifest.transferScheme,
                   let value = attributes["value"].flatMap({ Int($0.trimmedWhitespace) }),
                   let owner = stack.lastIndex(where: { $0.name == "Representation" || $0.name == "AdaptationSet" }),
                   stack[owner].transfer == nil {
                    stack[owner].transfer = value
                }
                let frame = Frame(name: name, attributes: attributes)
                if selfClosing { close(frame) } else { stack.append(frame) }
            case .end(let name):
                guard let index = stack.lastIndex(where: { $0.name == name }) else { return }
                while stack.count > index { close(stack.removeLast()) }
            }
        }

        mutating func closeAll() {
            while let frame = stack.popLast() { close(frame) }
            if !orphans.isEmpty {
                manifest.adaptationSets.append(DASHAdaptationSet(representations: orphans))
                manifest.warnings.append("\(orphans.count) Representation(s) outside any AdaptationSet")
                orphans = []
            }
        }

        private mutating func close(_ frame: Frame) {
            switch frame.name {
            case "Representation":
                if let set = stack.lastIndex(where: { $0.name == "AdaptationSet" }) {
                    stack[set].representations.append(frame)
                } else {
                    orphans.append(Self.resolve(frame, in: nil))
                }
            case "AdaptationSet":
                var set = DASHAdaptationSet(
                    id: frame.attributes["id"], maxWidth: Self.int(frame.attributes["maxWidth"]),
                    maxHeight: Self.int(frame.attributes["maxHeight"]), transferCharacteristics: frame.transfer)
                set.representations = frame.representations.map { Self.resolve($0, in: frame) }
                manifest.adaptationSets.append(set)
            default:
                break
            }
        }

        private static func resolve(_ rep: Frame, in set: Frame?) -> DASHRepresentation {
            func attr(_ key: String) -> String? { rep.attributes[key] ?? set?.attributes[key] }
            var r = DASHRepresentation()
            r.id = rep.attributes["id"]
            r.bandwidth = int(rep.attributes["bandwidth"])
            r.width = int(attr("width"))
            r.height = int(attr("height"))
            r.codecs = attr("codecs").map(CodecString.split) ?? []
            r.supplementalCodecs = (attr("supplementalCodecs") ?? "")
                .split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
            r.mimeType = attr("mimeType")?.trimmedWhitespace.lowercased()
            r.contentType = attr("contentType")?.trimmedWhitespace.lowercased()
            r.transferCharacteristics = rep.transfer ?? set?.transfer
            r.kind = kind(of: r)
            return r
        }

        private static func kind(of r: DASHRepresentation) -> DASHMediaKind {
            for declared in [r.contentType, r.mimeType.map { String($0.prefix { $0 != "/" }) }] {
                if let kind = DASHMediaKind(rawValue: declared ?? ""), kind != .unknown { return kind }
            }
            if r.mimeType == "application/ttml+xml" { return .text }
            let parsed = r.codecs.map(CodecString.init)
            if parsed.contains(where: \.isVideo) { return .video }
            if !parsed.isEmpty, parsed.allSatisfy({ $0.family == .audio }) { return .audio }
            if r.width != nil || r.height != nil { return .video }
            return .unknown
        }

        /// A positive integer attribute, else nil.
        private static func int(_ s: String?) -> Int? { s.flatMap { Int($0.trimmedWhitespace) }.flatMap { $0 > 0 ? $0 : nil } }
    }
}

/// One start or end tag, names without namespace prefix.
enum XMLEvent {
    case start(name: String, attributes: [String: String], selfClosing: Bool)
    case end(name: String)
}

/// A tolerant tag scanner: skips `<?…?>`, `<!--…-->`, `<![CDATA[…]]>`, `<!DOCTYPE …>` and
/// text; reads single- or double-quoted (and, tolerated, unquoted) attributes, entity-decoded;
/// drops namespace prefixes from element and attribute names and skips `xmlns` attributes.
enum XMLTagScanner {
    /// Calls `visit` per tag; returns false when the input ends inside markup (that last,
    /// unfinished tag is not reported).
    static func scan(_ b: [UInt8], _ visit: (XMLEvent) -> Void) -> Bool {
        let n = b.count
        var i = 0
        while i < n {
            guard b[i] == 0x3C else { i += 1; continue }
            let next = i + 1 < n ? b[i + 1] : 0
            if next == 0x21 || next == 0x3F {  // comment, CDATA, processing instruction, DOCTYPE
                let pair = [("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>")].first { has(b, i, $0.0) } ?? ("<!", ">")
                guard let end = find(b, i + pair.0.utf8.count, pair.1, brackets: pair.0 == "<!") else { return false }
                i = end + pair.1.utf8.count
                continue
            }
            if next == 0x2F {
                guard let end = find(b, i + 2, ">") else { return false }
                visit(.end(name: localName(String(decoding: b[(i + 2)..<end], as: UTF8.self))))
                i = end + 1
                continue
            }
            var j = i + 1
            while j < n, !isSpace(b[j]), b[j] != 0x3E, b[j] != 0x2F { j += 1 }
            let name = localName(String(decoding: b[(i + 1)..<j], as: UTF8.self))
            if name.isEmpty { i += 1; continue }  // a stray "<"
            var attributes: [String: String] = [:]
            var end: (selfClosing: Bool, next: Int)?
            while j < n, end == nil {
                switch b[j] {
                case 0x3E: end = (false, j + 1)
                case 0x2F where j + 1 < n && b[j + 1] == 0x3E: end = (true, j + 2)
                case 0x2F, 0x20, 0x09, 0x0A, 0x0D: j += 1
                default:
                    let nameStart = j
                    while j < n, !isSpace(b[j]), b[j] != 0x3D, b[j] != 0x3E, b[j] != 0x2F { j += 1 }
                    let rawName = String(decoding: b[nameStart..<j], as: UTF8.self)
                    guard let value = attributeValue(b, &j) else { return false }
                    let key = localName(rawName)
                    if !rawName.hasPrefix("xmlns"), !key.isEmpty, attributes[key] == nil { attributes[key] = value }
                }
            }
            guard let end else { return false }
            visit(.start(name: name, attributes: attributes, selfClosing: end.selfClosing))
            i = end.next
        }
        return true
    }

    /// After an attribute name: `= "v"`, `= 'v'` or (tolerated) `= v` → v, entity-decoded; no
    /// `=` → "". Nil when the input ends first. Leaves `j` after the value.
    private static func attributeValue(_ b: [UInt8], _ j: inout Int) -> String? {
        let n = b.count
        var k = j
        while k < n, isSpace(b[k]) { k += 1 }
        guard k < n, b[k] == 0x3D else { j = k; return k < n ? "" : nil }
        k += 1
        while k < n, isSpace(b[k]) { k += 1 }
        guard k < n else { return nil }
        let quote = b[k] == 0x22 || b[k] == 0x27 ? b[k] : nil
        let start = quote == nil ? k : k + 1
        k = start
        while k < n, quote.map({ b[k] != $0 }) ?? !(isSpace(b[k]) || b[k] == 0x3E) { k += 1 }
        guard k < n || quote == nil else { return nil }
        j = quote == nil ? k : k + 1
        return decodeEntities(b[start..<k])
    }

    static func localName(_ raw: String) -> String {
        let trimmed = raw.trimmedWhitespace
        guard let colon = trimmed.utf8.lastIndex(of: 0x3A) else { return trimmed }
        return String(trimmed[trimmed.utf8.index(after: colon)...])
    }

    static func decodeEntities(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            guard let semi = after.prefix(12).firstIndex(of: ";") else { out += "&"; rest = after; continue }
            let entity = String(after[..<semi])
            let named: [String: Unicode.Scalar] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
            let hex = entity.hasPrefix("#x") || entity.hasPrefix("#X")
            let number = entity.hasPrefix("#") ? UInt32(entity.dropFirst(hex ? 2 : 1), radix: hex ? 16 : 10) : nil
            let scalar = named[entity] ?? number.flatMap(Unicode.Scalar.init)
            guard let scalar else { out += "&"; rest = after; continue }
            out.unicodeScalars.append(scalar)
            rest = after[after.index(after: semi)...]
        }
        return out + rest
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    private static func has(_ b: [UInt8], _ i: Int, _ s: String) -> Bool { b[i...].starts(with: s.utf8) }

    /// The index of `s` at or after `from`; with `brackets`, not inside `[…]` (a DOCTYPE subset).
    private static func find(_ b: [UInt8], _ from: Int, _ s: String, brackets: Bool = false) -> Int? {
        let needle = Array(s.utf8)
        var i = from
        var depth = 0
        while i + needle.count <= b.count {
            if brackets, b[i] == 0x5B || b[i] == 0x5D { depth += b[i] == 0x5B ? 1 : -1 }
            if depth <= 0, b[i] == needle[0], b[i...].starts(with: needle) { return i }
            i += 1
        }
        return nil
    }
}
