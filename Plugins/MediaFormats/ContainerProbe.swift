// Reads a container's streams with libavformat: a local file by path, or the first bytes of a
// URL the host read for us (a custom AVIOContext over memory). Bounded in bytes (probesize),
// in media time (analyzeduration) and in wall time (an interrupt callback with a deadline), so a
// hung or huge input never blocks the host for long.

import CAVFormat
import Glibc

/// One elementary stream as the container describes it.
struct ProbedStream: Equatable {
    enum Kind: String { case video, audio, subtitle, data, attachment }
    var index: Int
    var kind: Kind
    var codec: String
    var profile: String?
    /// The codec's own profile number (H.264 `profile_idc` 100 = High, HEVC 2 = Main 10, VP9 2).
    var profileID: Int?
    var level: Int?
    var width: Int?
    var height: Int?
    var frameRate: Double?
    var bitDepth: Int?
    var pixelFormat: String?
    var transfer: String?
    /// `HDR10`, `HLG`, `DolbyVision` or `SDR` (video only).
    var hdrFormat: String?
    var dolbyVisionProfile: Int?
    var channels: Int?
    var sampleRate: Int?
    var language: String?
    var title: String?
    var isDefault = false
    /// RFC 6381-style codec string (`avc1.640028`, `hvc1.2.4.L153`), when it can be formed.
    var codecString: String?
}

/// What libavformat found in a container.
struct ProbedContainer: Equatable {
    /// libavformat's demuxer name (`matroska,webm`, `mov,mp4,m4a,3gp,3g2,mj2`, `flac`, …).
    var format: String
    var duration: Double?
    var bitRate: Int?
    var streams: [ProbedStream]
}

enum ContainerProbe {
    /// Bytes libavformat may read to find the streams (10 MiB).
    static let probeBytes: Int64 = 10 * 1024 * 1024
    /// Media time it may analyse (5 s).
    static let analyzeMicroseconds: Int64 = 5_000_000
    /// Wall time for the whole probe (4 s): the interrupt callback aborts after it.
    static let wallNanoseconds: UInt64 = 4_000_000_000

    struct Failure: Error { var message: String }

    /// Probes a local regular file (FIFOs and devices are refused: a read could block forever).
    static func probe(path: String) throws(Failure) -> ProbedContainer {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure(message: "cannot stat \(path): \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Failure(message: "\(path) is not a regular file") }
        return try run(complete: true, open: { context in avformat_open_input(&context, path, nil, nil) })
    }

    /// Probes bytes in memory (the head of a URL).
    static func probe(bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> ProbedContainer {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw Failure(message: "no bytes to probe") }
        let source = MemorySource(base: base, count: bytes.count)
        let bufferSize = 64 * 1024
        guard let buffer = av_malloc(bufferSize) else { throw Failure(message: "out of memory") }
        let opaque = Unmanaged.passUnretained(source).toOpaque()
        guard var io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(bufferSize), 0, opaque,
                                          { opaque, target, size in
                                              let source = Unmanaged<MemorySource>.fromOpaque(opaque!).takeUnretainedValue()
                                              return source.read(into: target!, size: Int(size))
                                          }, nil,
                                          { opaque, offset, whence in
                                              let source = Unmanaged<MemorySource>.fromOpaque(opaque!).takeUnretainedValue()
                                              return source.seek(offset, whence: whence)
                                          }) else {
            av_free(buffer)
            throw Failure(message: "out of memory")
        }
        defer {
            av_freep(&io.pointee.buffer)
            var optional: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&optional)
        }
        return try withExtendedLifetime(source) { () throws(Failure) -> ProbedContainer in
            try run(complete: false, open: { context in
                context!.pointee.pb = io
                context!.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
                return avformat_open_input(&context, nil, nil, nil)
            })
        }
    }

    /// `complete`: the whole file can be read (a local file), not only its head (a URL's first MiB).
    private static func run(complete: Bool, open: (inout UnsafeMutablePointer<AVFormatContext>?) -> Int32) throws(Failure) -> ProbedContainer {
        av_log_set_level(AV_LOG_QUIET)
        var context = avformat_alloc_context()
        guard let allocated = context else { throw Failure(message: "out of memory") }
        let deadline = Deadline(at: monotonicNanoseconds() + wallNanoseconds)
        allocated.pointee.interrupt_callback = AVIOInterruptCB(callback: { opaque in
            Unmanaged<Deadline>.fromOpaque(opaque!).takeUnretainedValue().passed ? 1 : 0
        }, opaque: Unmanaged.passUnretained(deadline).toOpaque())
        allocated.pointee.probesize = probeBytes
        allocated.pointee.max_analyze_duration = analyzeMicroseconds
        let opened = withExtendedLifetime(deadline) { open(&context) }
        guard opened >= 0, let ctx = context else {
            // avformat_open_input frees the context on failure.
            throw Failure(message: deadline.passed ? "probe took longer than \(wallNanoseconds / 1_000_000_000) s" : "not a readable container (\(errorText(opened)))")
        }
        defer { avformat_close_input(&context) }
        let found = withExtendedLifetime(deadline) { avformat_find_stream_info(ctx, nil) }
        if found < 0, deadline.passed { throw Failure(message: "probe took longer than \(wallNanoseconds / 1_000_000_000) s") }
        var streams: [ProbedStream] = []
        for i in 0..<Int(ctx.pointee.nb_streams) {
            guard let stream = ctx.pointee.streams[i] else { continue }
            if let probed = describe(stream, index: i) { streams.append(probed) }
        }
        // A duration is sent to the device only when it is known: stated by the container (a WAV
        // header's data size, an MP4's mvhd), or measured over the whole file. An estimate from
        // the bit rate, or from the timestamps of a head alone, is no duration (a 600 s WAV read
        // for its first MiB came out as 262 s).
        let method = ctx.pointee.duration_estimation_method
        let known = method == AVFMT_DURATION_FROM_STREAM || (complete && method == AVFMT_DURATION_FROM_PTS)
        let duration = known ? ctx.pointee.duration : 0
        return ProbedContainer(
            format: ctx.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown",
            duration: duration > 0 && duration != castline_av_nopts_value() ? Double(duration) / Double(castline_av_time_base()) : nil,
            bitRate: ctx.pointee.bit_rate > 0 ? Int(ctx.pointee.bit_rate) : nil,
            streams: streams)
    }

    private static func describe(_ stream: UnsafeMutablePointer<AVStream>, index: Int) -> ProbedStream? {
        guard let par = stream.pointee.codecpar?.pointee else { return nil }
        let kind: ProbedStream.Kind
        switch par.codec_type {
        case AVMEDIA_TYPE_VIDEO:
            // Cover art in MP3/FLAC/MP4 is an attached picture, not a video stream.
            kind = (stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0 ? .attachment : .video
        case AVMEDIA_TYPE_AUDIO: kind = .audio
        case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
        case AVMEDIA_TYPE_ATTACHMENT: kind = .attachment
        default: kind = .data
        }
        var s = ProbedStream(index: index, kind: kind, codec: String(cString: avcodec_get_name(par.codec_id)))
        if let name = avcodec_profile_name(par.codec_id, par.profile) { s.profile = String(cString: name) }
        if par.profile >= 0 { s.profileID = Int(par.profile) }
        s.language = metadata(stream.pointee.metadata, "language")
        s.title = metadata(stream.pointee.metadata, "title")
        s.isDefault = (stream.pointee.disposition & AV_DISPOSITION_DEFAULT) != 0
        switch kind {
        case .video:
            s.width = par.width > 0 ? Int(par.width) : nil
            s.height = par.height > 0 ? Int(par.height) : nil
            s.level = par.level > 0 ? Int(par.level) : nil
            let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
            if rate.num > 0, rate.den > 0 { s.frameRate = (Double(rate.num) / Double(rate.den) * 1000).rounded() / 1000 }
            if par.format >= 0, let desc = av_pix_fmt_desc_get(AVPixelFormat(rawValue: par.format)) {
                s.bitDepth = Int(desc.pointee.comp.0.depth)
                s.pixelFormat = String(cString: desc.pointee.name)
            } else if par.bits_per_raw_sample > 0 {
                s.bitDepth = Int(par.bits_per_raw_sample)
            }
            if let name = av_color_transfer_name(par.color_trc) { s.transfer = String(cString: name) }
            var size = 0
            if let raw = av_stream_get_side_data(stream, AV_PKT_DATA_DOVI_CONF, &size), size >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size {
                let record = UnsafeRawPointer(raw).loadUnaligned(as: AVDOVIDecoderConfigurationRecord.self)
                s.dolbyVisionProfile = Int(record.dv_profile)
                s.hdrFormat = "DolbyVision"
            } else if par.color_trc == AVCOL_TRC_SMPTE2084 {
                s.hdrFormat = "HDR10"
            } else if par.color_trc == AVCOL_TRC_ARIB_STD_B67 {
                s.hdrFormat = "HLG"
            } else {
                s.hdrFormat = "SDR"
            }
            s.codecString = CodecStrings.make(s)
        case .audio:
            s.channels = par.ch_layout.nb_channels > 0 ? Int(par.ch_layout.nb_channels) : nil
            s.sampleRate = par.sample_rate > 0 ? Int(par.sample_rate) : nil
            s.codecString = CodecStrings.make(s)
        default:
            break
        }
        return s
    }

    private static func metadata(_ dict: OpaquePointer?, _ key: String) -> String? {
        guard let entry = av_dict_get(dict, key, nil, 0), let value = entry.pointee.value else { return nil }
        let text = String(cString: value)
        return text.isEmpty || text == "und" ? nil : text
    }

    private static func errorText(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(cString: buffer)
    }

    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// The interrupt callback's deadline.
final class Deadline {
    let at: UInt64
    init(at: UInt64) { self.at = at }
    var passed: Bool { ContainerProbe.monotonicNanoseconds() >= at }
}

/// Bytes in memory read through a custom AVIOContext.
final class MemorySource {
    let base: UnsafePointer<UInt8>
    let count: Int
    var position = 0

    init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    func read(into target: UnsafeMutablePointer<UInt8>, size: Int) -> Int32 {
        let n = min(size, count - position)
        guard n > 0 else { return castline_averror_eof() }
        target.update(from: base + position, count: n)
        position += n
        return Int32(n)
    }

    func seek(_ offset: Int64, whence: Int32) -> Int64 {
        // The head is not the file: its size is unknown (said as it is, libavformat would take
        // the head's size for the file's and estimate a duration from it).
        if whence & castline_avseek_size() != 0 { return -1 }
        let target: Int64
        switch whence & 3 {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = Int64(position) + offset
        case SEEK_END: return -1
        default: return -1
        }
        // Past the head we were given is unknown, not an error libavformat should retry forever.
        guard target >= 0, target <= Int64(count) else { return -1 }
        position = Int(target)
        return target
    }
}
