// Media format analysis: content type, LIVE/BUFFERED, size, codecs and dynamic range from a
// URL, a Content-Type value and/or a manifest body. Pure stdlib: no Foundation.

/// Works out a `MediaFormatReport` from whatever is known about a media item.
///
/// - Content type: the given one (trimmed, type/subtype lowercased, parameters dropped) wins
///   unless it is generic (`application/octet-stream`, `text/plain`, …); else the URL's
///   extension; else sniffed from the body (`#EXTM3U` → HLS, `<MPD` → DASH). A body that sniffs
///   as a different manifest kind than the content type says is parsed as what it is (noted).
/// - HLS master: size, codecs and dynamic range of the largest variant (pixel count; ties →
///   higher HDR rank DV > HDR10 > HLG > unknown > SDR, then higher BANDWIDTH, then file order);
///   `variantURI` is that variant's URI; `streamType` stays nil.
/// - HLS media playlist: `streamType` only. DASH: all of it, from the largest video
///   Representation (same tie rules).
/// - A `codecs` parameter of the content type (`video/mp4; codecs="hvc1.2.4.L153.B0"`) gives
///   codecs and dynamic range when no manifest did.
/// - Dynamic range, first match wins: Dolby Vision (DV supplemental codec or DV codec) → `dv`/
///   `DolbyVision`; VIDEO-RANGE=PQ or transfer 16 → `hdr`/`HDR10`; VIDEO-RANGE=HLG or transfer
///   18 → `hdr`/`HLG`; VIDEO-RANGE=SDR, a non-HDR transfer, or only 8-bit-only codecs →
///   `sdr`/`SDR`; a 10-bit codec with nothing else → nil, noted "10-bit, dynamic range not
///   signalled".
/// - Only the first `maxScanBytes` of a body are read (noted).
enum MediaFormatAnalyzer {
    /// Bodies longer than this are cut before parsing (4 MiB).
    static let maxScanBytes = 4 * 1024 * 1024

    static func analyze(url: String?, contentType: String?, body: [UInt8]?) -> MediaFormatReport {
        var report = MediaFormatReport()
        var codecsParameter: String?
        if let given = contentType {
            let parsed = ContentTypeTable.parse(given)
            codecsParameter = parsed.parameters["codecs"]
            if !ContentTypeTable.isGeneric(parsed.mediaType) {
                report.contentType = parsed.mediaType
            } else if !parsed.mediaType.isEmpty {
                report.notes.append("ignored generic content type \(parsed.mediaType)")
            }
        }
        if report.contentType == nil, let url, let fromURL = ContentTypeTable.contentType(forURL: url) {
            report.contentType = fromURL
        }
        var scanned: ArraySlice<UInt8>?
        var cut = false
        if let body {
            cut = body.count > maxScanBytes
            scanned = cut ? body[..<maxScanBytes] : body[...]
            if cut { report.notes.append("body is \(body.count) bytes; only the first \(maxScanBytes) were scanned") }
        }
        var kind = report.contentType.flatMap(ContentTypeTable.manifestKind(of:))
        if let scanned, let sniffed = ContentTypeTable.sniffManifest(scanned), sniffed != kind {
            if let declared = report.contentType {
                report.notes.append("body looks like \(sniffed.contentType) although the content type is \(declared)")
            } else {
                report.contentType = sniffed.contentType
                report.notes.append("content type sniffed from the body")
            }
            kind = sniffed
        }
        switch kind {
        case .hls?, .dash?:
            guard let scanned else {
                report.notes.append("no body: manifest not inspected")
                break
            }
            if kind == .hls { analyzeHLS(scanned, cut: cut, into: &report) } else { analyzeDASH(scanned, into: &report) }
        default:
            break
        }
        if report.videoCodecs.isEmpty, report.hdrType == nil, let codecsParameter {
            var candidate = Candidate(label: "content type codecs", source: .contentType)
            candidate.codecs = CodecString.parseList(codecsParameter)
            apply(candidate, verdict(for: candidate), to: &report, size: false)
        }
        return report
    }

    // MARK: HLS

    private static func analyzeHLS(_ body: ArraySlice<UInt8>, cut: Bool, into report: inout MediaFormatReport) {
        var bytes = body
        if cut, let end = bytes.lastIndex(where: { $0 == 0x0A || $0 == 0x0D }) { bytes = bytes[..<end] }
        let playlist: HLSPlaylist
        do { playlist = try HLSPlaylist.parse(bytes: bytes) } catch { report.notes.append(error.message); return }
        report.notes += playlist.warnings
        guard playlist.kind == .master else {
            if cut, !playlist.hasEndList, playlist.playlistType != "VOD" {
                report.notes.append("stream type unknown: #EXT-X-ENDLIST may lie beyond the scanned part")
            } else {
                report.streamType = playlist.streamType
                report.notes.append(playlist.streamTypeReason)
            }
            return
        }
        let candidates = playlist.variants.map { v in
            var c = Candidate(label: v.width.map { "\($0)x\(v.height ?? 0) variant" } ?? "variant \(v.uri)", source: .hls)
            c.width = v.width
            c.height = v.height
            c.bandwidth = v.bandwidth
            c.codecs = v.codecs.map(CodecString.init)
            c.supplemental = v.supplementalCodecs
            c.videoRange = v.videoRange
            c.uri = v.uri
            return c
        }
        guard let index = choose(candidates) else {
            report.notes.append("master playlist has no usable variant")
            return
        }
        let (best, verdict) = (candidates[index], verdict(for: candidates[index]))
        report.variantURI = best.uri
        apply(best, verdict, to: &report, size: true)
        report.notes.append("master playlist: chose \(best.label) \(best.uri ?? "") of \(candidates.count); "
            + "LIVE/BUFFERED comes from its media playlist")
    }

    // MARK: DASH

    private static func analyzeDASH(_ body: ArraySlice<UInt8>, into report: inout MediaFormatReport) {
        let manifest: DASHManifest
        do { manifest = try DASHManifest.parse(bytes: body) } catch { report.notes.append(error.message); return }
        report.streamType = manifest.streamType
        switch manifest.type {
        case nil: report.notes.append("MPD has no type attribute (static)")
        case "static"?, "dynamic"?: report.notes.append("MPD type=\(manifest.type ?? "")")
        case let other?: report.notes.append("MPD type=\(other) is unknown; read as static")
        }
        report.notes += manifest.warnings
        var candidates: [Candidate] = []
        var sets: [DASHAdaptationSet] = []
        for set in manifest.adaptationSets {
            for rep in set.representations where rep.kind == .video {
                var width = rep.width
                var height = rep.height
                if width == nil || height == nil, let w = set.maxWidth, let h = set.maxHeight { (width, height) = (w, h) }
                let size = width.flatMap { w in height.map { "\(w)x\($0)" } }
                let name = size.map { "\($0) representation" } ?? "representation \(rep.id ?? "?")"
                var c = Candidate(label: name, source: .dash)
                (c.width, c.height, c.bandwidth) = (width, height, rep.bandwidth)
                c.codecs = rep.codecs.map(CodecString.init)
                c.supplemental = rep.supplementalCodecs
                c.transfer = rep.transferCharacteristics
                candidates.append(c)
                sets.append(set)
            }
        }
        guard let index = choose(candidates) else {
            report.notes.append("no video Representation found")
            return
        }
        let (best, verdict) = (candidates[index], verdict(for: candidates[index]))
        apply(best, verdict, to: &report, size: true)
        let set = sets[index]
        if let w = set.maxWidth, let h = set.maxHeight, pixels(w, h) > best.pixels {
            (report.width, report.height) = (w, h)
            report.notes.append("size from AdaptationSet maxWidth/maxHeight \(w)x\(h) (largest Representation: \(best.label))")
        }
    }

    // MARK: Choosing and deciding

    enum Source: Equatable { case hls, dash, contentType }

    /// One variant / Representation / codecs parameter, reduced to what the decision reads.
    struct Candidate: Equatable {
        var label: String
        var source: Source
        var width: Int?
        var height: Int?
        var bandwidth: Int?
        var codecs: [CodecString] = []
        /// Supplemental codec entries as written (HLS brands kept).
        var supplemental: [String] = []
        var videoRange: String?
        var transfer: Int?
        var uri: String?

        init(label: String, source: Source) { (self.label, self.source) = (label, source) }

        var pixels: Int { MediaFormatAnalyzer.pixels(width, height) }
    }

    /// width × height, saturating at Int.max; 0 when either is missing or not positive.
    static func pixels(_ width: Int?, _ height: Int?) -> Int {
        guard let w = width, let h = height, w > 0, h > 0 else { return 0 }
        let (product, overflow) = w.multipliedReportingOverflow(by: h)
        return overflow ? Int.max : product
    }

    struct Verdict {
        var hdrType: String?
        var hdrFormat: String?
        /// DV 4, HDR10 3, HLG 2, unknown 1, SDR 0: the tie-breaker between same-size candidates.
        var rank: Int
        var notes: [String]
    }

    /// The index of the largest candidate; ties → higher rank, then higher bandwidth, then first.
    private static func choose(_ candidates: [Candidate]) -> Int? {
        var best: (index: Int, key: (Int, Int, Int))?
        for (index, c) in candidates.enumerated() {
            if let b = best, c.pixels < b.key.0 { continue }  // the verdict is only needed on ties
            let key = (c.pixels, verdict(for: c).rank, c.bandwidth ?? 0)
            if best == nil || key > best!.key { best = (index, key) }
        }
        return best?.index
    }

    private static func apply(_ c: Candidate, _ v: Verdict, to report: inout MediaFormatReport, size: Bool) {
        if size { (report.width, report.height) = (c.width, c.height) }
        var codecs = c.codecs.filter(\.isVideo).map(\.raw)
        for entry in c.supplemental.map(CodecString.stripBrands) where !codecs.contains(entry) && !entry.isEmpty {
            codecs.append(entry)
        }
        report.videoCodecs = codecs
        (report.hdrType, report.hdrFormat) = (v.hdrType, v.hdrFormat)
        report.notes += v.notes
    }

    static func verdict(for c: Candidate) -> Verdict {
        let on = " on \(c.label)"
        let hls = c.source == .hls
        let transferName = "TransferCharacteristics"
        let video = c.codecs.filter(\.isVideo)
        if let entry = c.supplemental.first(where: { CodecString(CodecString.stripBrands($0)).family == .dolbyVision }) {
            var notes = ["\(hls ? "SUPPLEMENTAL-CODECS" : "supplementalCodecs")=\(entry)\(on)"]
            let expected = ["db1p": "PQ", "db2g": "SDR", "db4h": "HLG"]
            for brand in CodecString.brands(entry) {
                if let range = expected[brand], let actual = c.videoRange, actual != range {
                    notes.append("brand \(brand) implies \(range == "PQ" ? "a" : "an") \(range) base layer but VIDEO-RANGE=\(actual)")
                }
            }
            return Verdict(hdrType: "dv", hdrFormat: "DolbyVision", rank: 4, notes: notes)
        }
        if let dv = video.first(where: { $0.family == .dolbyVision }) {
            return Verdict(hdrType: "dv", hdrFormat: "DolbyVision", rank: 4, notes: ["Dolby Vision codec \(dv.raw)\(on)"])
        }
        for (range, tc, hint, format, rank) in [("PQ", 16, CodecHDRHint.pq, "HDR10", 3), ("HLG", 18, .hlg, "HLG", 2)] {
            var note: String?
            if c.videoRange == range {
                note = "VIDEO-RANGE=\(range)\(on)"
            } else if c.transfer == tc {
                note = "\(transferName)=\(tc) (\(range))\(on)"
            } else if let codec = video.first(where: { $0.hint == hint }) {
                note = "codec \(codec.raw) signals transfer \(tc) (\(range))\(on)"
            }
            if let note { return Verdict(hdrType: "hdr", hdrFormat: format, rank: rank, notes: [note]) }
        }
        var notes: [String] = []
        if let range = c.videoRange, range != "SDR" { notes.append("unrecognised VIDEO-RANGE=\(range)\(on)") }
        let sdr = Verdict(hdrType: "sdr", hdrFormat: "SDR", rank: 0, notes: [])
        if c.videoRange == "SDR" { return with(sdr, notes + ["VIDEO-RANGE=SDR\(on)"]) }
        if let tc = c.transfer, tc != 2 { return with(sdr, notes + ["\(transferName)=\(tc) (SDR)\(on)"]) }
        if !video.isEmpty, video.allSatisfy({ $0.hint == .sdr }) {
            let codec = video[0]
            let why = codec.transferCharacteristics.map { "codec \(codec.raw) signals transfer \($0) (SDR)" }
                ?? "8-bit codec \(codec.raw), no HDR signal"
            return with(sdr, notes + [why + on])
        }
        if let codec = video.first(where: { $0.hint == .tenBit }) {
            notes.append("10-bit, dynamic range not signalled (\(codec.raw)\(on))")
        }
        return Verdict(hdrType: nil, hdrFormat: nil, rank: 1, notes: notes)
    }

    private static func with(_ verdict: Verdict, _ notes: [String]) -> Verdict {
        var v = verdict
        v.notes = notes
        return v
    }
}
