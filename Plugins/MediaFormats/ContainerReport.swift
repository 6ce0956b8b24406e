// Folds what libavformat read from a container into the media-format report: the file's own
// streams decide size, dynamic range, codecs and (when nothing better is known) the content type.

enum ContainerReport {
    /// Probes `url` (a local path or file:// URL) or else `body` (the head of a URL) when the
    /// report is not a manifest; the container's findings replace the guesses from names.
    static func enrich(_ report: inout MediaFormatReport, url: String?, body: UnsafeBufferPointer<UInt8>?) {
        if let type = report.contentType, ContentTypeTable.isManifest(type) || type.hasPrefix("text/") || type.hasPrefix("image/") { return }
        let probed: Result<ProbedContainer, ContainerProbe.Failure>
        if let path = localPath(url) {
            probed = Result { () throws(ContainerProbe.Failure) in try ContainerProbe.probe(path: path) }
        } else if let body, body.count > 0 {
            probed = Result { () throws(ContainerProbe.Failure) in try ContainerProbe.probe(bytes: body) }
        } else {
            return
        }
        switch probed {
        case .failure(let failure):
            report.notes.append("container not read: \(failure.message)")
        case .success(let container):
            apply(container, to: &report)
        }
    }

    static func apply(_ container: ProbedContainer, to report: inout MediaFormatReport) {
        report.container = container
        let videos = container.streams.filter { $0.kind == .video }
        let audios = container.streams.filter { $0.kind == .audio }
        if let main = videos.max(by: { ($0.width ?? 0) * ($0.height ?? 0) < ($1.width ?? 0) * ($1.height ?? 0) }) {
            report.width = main.width
            report.height = main.height
            report.hdrFormat = main.hdrFormat
            report.hdrType = switch main.hdrFormat {
            case "DolbyVision"?: "dv"
            case "HDR10"?, "HLG"?: "hdr"
            default: "sdr"
            }
            report.notes.append("video from the container: \(main.codec) \(main.profile ?? "") \(main.width ?? 0)x\(main.height ?? 0) "
                                + "\(main.bitDepth.map { "\($0)-bit " } ?? "")\(main.hdrFormat ?? "")")
        } else {
            report.width = nil
            report.height = nil
            report.hdrType = nil
            report.hdrFormat = nil
        }
        report.videoCodecs = videos.compactMap(\.codecString)
        if let derived = contentType(container.format, hasVideo: !videos.isEmpty, codecs: container.streams.map(\.codec)),
           report.contentType == nil || report.contentType == "application/octet-stream" {
            report.contentType = derived
            report.notes.append("content type from the container (\(container.format))")
        }
        if !audios.isEmpty, videos.isEmpty { report.notes.append("audio only") }
        if container.format != "hls" { report.streamType = report.streamType ?? "BUFFERED" }
    }

    /// The MIME type of a libavformat demuxer's output.
    static func contentType(_ format: String, hasVideo: Bool, codecs: [String]) -> String? {
        let names = format.split(separator: ",")
        if names.contains("mp4") || names.contains("mov") { return hasVideo ? "video/mp4" : "audio/mp4" }
        if names.contains("matroska") {
            let webm: Set<String> = ["vp8", "vp9", "av1", "opus", "vorbis", "webvtt"]
            return codecs.allSatisfy(webm.contains) ? (hasVideo ? "video/webm" : "audio/webm") : (hasVideo ? "video/x-matroska" : "audio/x-matroska")
        }
        switch format {
        case "mpegts": return "video/mp2t"
        case "flac": return "audio/flac"
        case "mp3": return "audio/mpeg"
        case "ogg": return hasVideo ? "video/ogg" : "audio/ogg"
        case "wav": return "audio/wav"
        case "aac": return "audio/aac"
        default: return nil
        }
    }

    static func localPath(_ url: String?) -> String? {
        guard let url else { return nil }
        if url.hasPrefix("/") { return url }
        if url.hasPrefix("file://") { return String(url.dropFirst(7)) }
        return nil
    }
}
