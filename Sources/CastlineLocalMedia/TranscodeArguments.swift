import CastCore

/// The ffmpeg command line for one remux or transcode (pure: tests read it without running ffmpeg).
///
/// Output is HLS with fragmented-MP4 segments (`index.m3u8`, `init.mp4`, `seg00000.m4s`…) in a
/// folder the media server publishes: the device starts on the first segments while ffmpeg
/// writes the rest, and seeks within what is written. Remux copies the streams (HEVC tagged
/// `hvc1`, which Cast's MSE needs); transcode re-encodes what the plan says to H.264 High 8-bit
/// (scaled to the plan's height, an HDR source tone-mapped to BT.709) and/or AAC-LC stereo. Hardware encoding (VA-API) only when the
/// config allows it and a render node exists.
package struct TranscodeArguments: Sendable, Equatable {
    package var input: String
    package var folder: String
    package var plan: MediaPlan
    /// The main video and audio streams' indexes in the input (nil: none).
    package var videoIndex: Int?
    package var audioIndex: Int?
    package var videoCodec: String?
    /// The main video is HDR (PQ, HLG, Dolby Vision): a transcode to SDR tone-maps it.
    package var sourceIsHDR = false
    /// Seconds into the input to start from.
    package var start: Double = 0
    /// A VA-API render node (`/dev/dri/renderD128`) to encode on; nil: software (libx264).
    package var vaapiDevice: String?
    /// Seconds per HLS segment.
    package var segmentSeconds = 2

    package init(input: String, folder: String, plan: MediaPlan, streams: [MediaStreamInfo]) {
        self.input = input
        self.folder = folder
        self.plan = plan
        let (video, audio) = MediaPlan.mainStreams(streams)
        videoIndex = video?.index
        audioIndex = audio?.index
        videoCodec = video?.codec
        sourceIsHDR = video.map(Self.isHDR) ?? false
    }

    /// PQ (`smpte2084`) or HLG (`arib-std-b67`) transfer, or an HDR format the probe named.
    static func isHDR(_ stream: MediaStreamInfo) -> Bool {
        if let transfer = stream.transfer, ["smpte2084", "arib-std-b67"].contains(transfer) { return true }
        if let format = stream.hdrFormat, ["HDR10", "HDR10+", "HLG", "DolbyVision"].contains(format) { return true }
        return false
    }

    /// HDR to SDR (BT.709) with the Hable curve, in linear light, after scaling down (cheaper at
    /// the target size): without it a PQ or HLG picture shown as BT.709 looks grey and washed out.
    package static let toneMap = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv"

    package static let playlistName = "index.m3u8"

    /// The same transcode in software (after a hardware attempt failed).
    package static func software(_ arguments: TranscodeArguments) -> TranscodeArguments {
        var copy = arguments
        copy.vaapiDevice = nil
        return copy
    }

    /// argv[1…] for ffmpeg.
    package var arguments: [String] {
        var a = ["-nostdin", "-hide_banner", "-loglevel", "error", "-nostats", "-progress", "pipe:1"]
        if vaapiDevice != nil, plan.transcodeVideo { a += ["-vaapi_device", vaapiDevice!] }
        if start > 0 { a += ["-ss", String(start)] }
        a += ["-i", input]
        if let videoIndex { a += ["-map", "0:\(videoIndex)"] }
        if let audioIndex { a += ["-map", "0:\(audioIndex)"] }
        if videoIndex != nil {
            if plan.transcodeVideo {
                let height = plan.targetHeight ?? 1080
                let fps = plan.targetFPS.map { ",fps=\($0.rounded2.formatted)" } ?? ""
                let toneMap = sourceIsHDR ? "," + Self.toneMap : ""
                if vaapiDevice != nil {
                    a += ["-vf", "scale=-2:\(height)\(fps)\(toneMap),format=nv12,hwupload", "-c:v", "h264_vaapi", "-profile:v", "high"]
                } else {
                    a += ["-vf", "scale=-2:\(height)\(fps)\(toneMap),format=yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency",
                          "-profile:v", "high", "-level:v", height > 1080 ? "5.1" : "4.1", "-crf", "23"]
                }
                // A keyframe per segment, so every segment starts playable and seeks land on a boundary.
                a += ["-force_key_frames", "expr:gte(t,n_forced*\(segmentSeconds))",
                      "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]
            } else {
                a += ["-c:v", "copy"]
                if videoCodec == "hevc" { a += ["-tag:v", "hvc1"] }
            }
        }
        if audioIndex != nil {
            a += plan.transcodeAudio ? ["-c:a", "aac", "-ac", "2", "-b:a", "160k"] : ["-c:a", "copy"]
        }
        a += ["-f", "hls", "-hls_time", String(segmentSeconds), "-hls_list_size", "0", "-hls_playlist_type", "event",
              "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4",
              "-hls_segment_filename", folder + "/seg%05d.m4s", folder + "/" + Self.playlistName]
        return a
    }

    /// The `VideoInfo` of the output: the source's size and range for a remux; the scaled, SDR
    /// size for a transcode.
    package static func outputVideo(_ source: VideoInfo?, plan: MediaPlan) -> VideoInfo? {
        guard let source else { return nil }
        guard plan.transcodeVideo, let height = plan.targetHeight, height < source.height else {
            return plan.transcodeVideo ? VideoInfo(width: source.width, height: source.height, hdrType: .sdr) : source
        }
        var width = source.width * height / max(source.height, 1)
        width -= width % 2
        return VideoInfo(width: width, height: height, hdrType: .sdr)
    }
}
