// RFC 6381-style codec strings for probed streams, as a manifest or a Content-Type's codecs
// parameter would carry them. Constraint flags and tiers are not in the container header, so
// they are written as their common values (avc1 constraints 00, HEVC Main tier).

enum CodecStrings {
    static func make(_ s: ProbedStream) -> String? {
        switch s.codec {
        case "h264":
            guard let p = s.profileID, let l = s.level else { return "avc1" }
            return "avc1." + hex2(p) + "00" + hex2(l)
        case "hevc":
            guard let p = s.profileID else { return "hvc1" }
            return "hvc1.\(p).4.L\(s.level ?? 0).B0"
        case "vp9":
            return "vp09.\(pad2(s.profileID ?? 0)).\(pad2(max(s.level ?? 10, 10))).\(pad2(s.bitDepth ?? 8))"
        case "av1":
            return "av01.\(s.profileID ?? 0).\(pad2(max(s.level ?? 0, 0)))M.\(pad2(s.bitDepth ?? 8))"
        case "vp8": return "vp8"
        case "aac": return "mp4a.40.\(s.profileID.map { $0 + 1 } ?? 2)"
        case "mp3": return "mp4a.40.34"
        case "ac3": return "ac-3"
        case "eac3": return "ec-3"
        case "opus": return "opus"
        case "vorbis": return "vorbis"
        case "flac": return "fLaC"
        default: return nil
        }
    }

    private static func hex2(_ v: Int) -> String {
        let digits = Array("0123456789ABCDEF")
        let b = max(0, min(v, 255))
        return String([digits[b >> 4], digits[b & 15]])
    }

    private static func pad2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
