// RFC 6381 codec strings ("codecs" parameter, HLS CODECS / SUPPLEMENTAL-CODECS, DASH @codecs).
// Pure stdlib: no Foundation.

/// The codec family a sample entry belongs to.
enum CodecFamily: String, Sendable, CaseIterable {
    case avc, hevc, vp9, av1, dolbyVision, audio, other
}

/// What a codec string alone says about dynamic range.
enum CodecHDRHint: String, Sendable, CaseIterable {
    /// A Dolby Vision sample entry (dvh1, dvhe, dva1, dvav, dav1).
    case dolbyVision
    /// Transfer characteristics 16 (SMPTE ST 2084, PQ: HDR10) in a ≥10-bit vp09/av01 string.
    case pq
    /// Transfer characteristics 18 (ARIB STD-B67, HLG) in a ≥10-bit vp09/av01 string.
    case hlg
    /// 10 bits or more and no transfer characteristics: HDR-capable, range not signalled.
    case tenBit = "10bit"
    /// An 8-bit-only profile, or a stated transfer that is neither PQ nor HLG.
    case sdr
}

/// One RFC 6381 codec entry (`hvc1.2.4.L153.B0`, `vp09.02.10.10.01.09.16.09.01`, `mp4a.40.2`)
/// and what it implies for format analysis. Parsing never fails: an unknown sample entry is
/// family `.other`, not video, with no bit depth and no hint.
///
/// Fields read, per sample entry (dot-separated, after the four-character code):
/// - `avc1`/`avc3`: `PPCCLL` (hex). Only `PP` = profile_idc is read: 66/77/88/100 → 8-bit,
///   110 (High 10) and 122 (High 4:2:2) → 10-bit; other profiles → bit depth unknown.
/// - `hvc1`/`hev1`: `[A|B|C]profile_idc.compat.tier+level.constraints…`. Only profile_idc is
///   read: 1 (Main) and 3 (Main Still Picture) → 8-bit, 2 (Main10) → 10-bit. Main10 is
///   HDR-capable but not HDR by itself (hint `.tenBit`).
/// - `dvh1`/`dvhe`/`dva1`/`dvav`/`dav1`: `profile.level`. Profile 9 (AVC base) → 8-bit;
///   4, 5, 7, 8, 10 → 10-bit (base or single layer). Always hint `.dolbyVision`.
/// - `vp09`: `profile.level.bitDepth.chroma.primaries.transfer.matrix.range`. Reads profile,
///   bitDepth and transfer (field 6). The short form `vp09.PP.LL.DD` carries no transfer: the
///   binding's BT.709 default is deliberately *not* assumed.
/// - `av01`: `profile.levelTier.bitDepth.monochrome.chroma.primaries.transfer.matrix.range`.
///   Reads profile, bitDepth and transfer (field 7); the short form stops after bitDepth.
/// - `vp8`/`vp08`: family `.other`, video, 8-bit. `vp9` (bare): family `.vp9`, nothing more.
///
/// Hint for a parsed transfer value (vp09/av01 only): 16 → `.pq`, 18 → `.hlg` when the bit
/// depth is 10 or 12 (a PQ/HLG transfer on 8-bit is contradictory: no hint); 2 (unspecified)
/// counts as absent; any other value → `.sdr`. Without a transfer: ≥10-bit → `.tenBit`,
/// 8-bit → `.sdr`, unknown depth → nil.
struct CodecString: Equatable, Sendable {
    /// The entry as given, trimmed.
    let raw: String
    /// The lowercased sample entry (four-character code), e.g. `hvc1`, `mp4a`, `ec-3`.
    let sampleEntry: String
    let family: CodecFamily
    let isVideo: Bool
    /// Profile number when read (AVC profile_idc, HEVC profile_idc, DV/VP9/AV1 profile).
    let profile: Int?
    let bitDepth: Int?
    /// Transfer characteristics (ISO/IEC 23091-2 / H.273) from a long vp09/av01 string.
    let transferCharacteristics: Int?
    let hint: CodecHDRHint?

    init(_ string: String) {
        let trimmed = string.trimmedWhitespace.strippingQuotes
        raw = trimmed
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let entry = (parts.first ?? "").lowercased()
        let fields = Array(parts.dropFirst())
        sampleEntry = entry
        var family = CodecFamily.other
        var isVideo = false
        var profile: Int?
        var bitDepth: Int?
        var transfer: Int?
        switch entry {
        case "avc1", "avc2", "avc3", "avc4":
            family = .avc
            isVideo = true
            if let first = fields.first, first.utf8.count >= 2 {
                profile = Int(String(first.prefix(2)), radix: 16)
            }
            switch profile {
            case 66, 77, 88, 100: bitDepth = 8
            case 110, 122: bitDepth = 10
            default: break
            }
        case "hvc1", "hev1", "hvc2", "hev2":
            family = .hevc
            isVideo = true
            if var first = fields.first {
                if let c = first.first, "ABCabc".contains(c) { first.removeFirst() }
                profile = Int(first)
            }
            switch profile {
            case 1, 3: bitDepth = 8
            case 2: bitDepth = 10
            default: break
            }
        case "dvh1", "dvhe", "dva1", "dvav", "dav1":
            family = .dolbyVision
            isVideo = true
            profile = fields.first.flatMap { Int($0) }
            switch profile {
            case 9: bitDepth = 8
            case 4, 5, 7, 8, 10: bitDepth = 10
            default: break
            }
        case "vp09":
            family = .vp9
            isVideo = true
            profile = Self.field(fields, 0)
            bitDepth = Self.field(fields, 2)
            transfer = Self.field(fields, 5)
        case "vp9":
            family = .vp9
            isVideo = true
        case "av01":
            family = .av1
            isVideo = true
            profile = Self.field(fields, 0)
            bitDepth = Self.field(fields, 2)
            transfer = Self.field(fields, 6)
        case "vp8", "vp08":
            isVideo = true
            bitDepth = 8
        case "mp4v", "vvc1", "vvi1", "avs3", "theora", "mjpg", "hvt1", "lhv1", "lhe1":
            isVideo = true
        case "mp4a", "ac-3", "ec-3", "ac-4", "opus", "flac", "alac", "vorbis", "mp3", ".mp3",
            "dtsc", "dtse", "dtsh", "dtsl", "dtsx", "mha1", "mha2", "mhm1", "mhm2", "ulaw", "alaw",
            "ipcm", "fpcm", "lpcm", "samr", "sawb":
            family = .audio
        default:
            break
        }
        self.family = family
        self.isVideo = isVideo
        self.profile = profile
        self.bitDepth = bitDepth
        self.transferCharacteristics = transfer
        self.hint = Self.hint(family: family, isVideo: isVideo, bitDepth: bitDepth, transfer: transfer)
    }

    /// Splits a CODECS attribute / codecs parameter value (`"avc1.640028, mp4a.40.2"`) into
    /// trimmed, non-empty entries; surrounding quotes are dropped.
    static func split(_ attributeValue: String) -> [String] {
        attributeValue.trimmedWhitespace.strippingQuotes
            .split(separator: ",")
            .map { String($0).trimmedWhitespace.strippingQuotes }
            .filter { !$0.isEmpty }
    }

    /// `split(_:)`, each entry parsed.
    static func parseList(_ attributeValue: String) -> [CodecString] {
        split(attributeValue).map(CodecString.init)
    }

    /// The codec part of a SUPPLEMENTAL-CODECS entry (`dvh1.08.07/db4h` → `dvh1.08.07`).
    static func stripBrands(_ entry: String) -> String {
        String(entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmedWhitespace
    }

    /// The compatibility brands of a SUPPLEMENTAL-CODECS entry (`dvh1.08.07/db4h` → `["db4h"]`).
    static func brands(_ entry: String) -> [String] {
        entry.split(separator: "/").dropFirst().map { String($0).trimmedWhitespace.lowercased() }
    }

    private static func field(_ fields: [String], _ index: Int) -> Int? {
        index < fields.count ? Int(fields[index].trimmedWhitespace) : nil
    }

    private static func hint(family: CodecFamily, isVideo: Bool, bitDepth: Int?, transfer: Int?) -> CodecHDRHint? {
        guard isVideo else { return nil }
        if family == .dolbyVision { return .dolbyVision }
        if let transfer, transfer != 2 {
            switch transfer {
            case 16, 18:
                guard let depth = bitDepth, depth >= 10 else { return nil }
                return transfer == 16 ? .pq : .hlg
            default:
                return .sdr
            }
        }
        guard let depth = bitDepth else { return nil }
        return depth >= 10 ? .tenBit : .sdr
    }
}
