import CastlineJobs
import CastCore
import CastHTTP
import CastlineLocalMedia
import CastSender
#if canImport(Glibc)
import Glibc
#endif

/// What castline does with a local file for a device before the LOAD: the capability table's
/// decision (``MediaPlan``), a dry run that only reports it, a refusal with the reason, or a
/// remux/transcode by an ffmpeg child whose HLS output is served instead of the file.
extension ControlPlane {
    /// The device's row of the capability table: by model name, else by its `ca` video-out bit.
    nonisolated static func capabilityFamily(of device: CastDevice) -> DeviceCapabilityTable.Family {
        DeviceCapabilityTable.shared.family(model: device.modelName, videoOut: device.capabilities.map { $0.contains(.videoOut) })
    }

    /// The plan for `format` on `device`; nil when no container was read (a manifest, a name).
    nonisolated static func plan(_ format: MediaFormatInfo?, for device: CastDevice) -> MediaPlan? {
        guard let format, !format.streams.isEmpty else { return nil }
        return MediaPlan.decide(format, family: capabilityFamily(of: device))
    }

    /// `cast --dry-run`: what would be loaded, and how, without touching the device.
    func dryRun(_ arguments: CastArguments, device: CastDevice, type: String?, format: MediaFormatInfo?, plan: MediaPlan?) -> JSONValue {
        var o = JSONObject()
        o.append(key: "dryRun", value: .bool(true))
        o.append(key: "device", value: .string(device.friendlyName))
        o.append(key: "model", value: .string(device.modelName))
        o.append(key: "family", value: .string(Self.capabilityFamily(of: device).name))
        o.append(key: "media", value: .string(arguments.media))
        if let type { o.append(key: "contentType", value: .string(type)) }
        if let video = format?.videoInfo { o.append(key: "videoInfo", value: video.json) }
        if let streams = format?.streams, !streams.isEmpty { o.append(key: "streams", value: .array(streams.map { .string($0.summary) })) }
        if let plan {
            o.append(key: "plan", value: plan.json)
            o.append(key: "decision", value: .string(plan.summary))
        } else {
            o.append(key: "decision", value: .string("direct: no container was read (\(arguments.media.hasPrefix("/") ? "not a media container" : "a URL is loaded as given")); the device decides"))
        }
        return .object(o)
    }

    /// Starts ffmpeg for `path` as `plan` says, serves its HLS folder to `device` and waits for
    /// the first segment. Returns the playlist's URL, its type and the output's format.
    func transcodeAndServe(_ path: String, plan: MediaPlan, format: MediaFormatInfo, device: CastDevice, start: Double?,
                           extra: [String: ServedFile]) async throws(ControlError) -> (url: String, type: String, format: MediaFormatInfo, server: MediaPublication) {
        guard let ffmpeg = MediaTranscode.ffmpegPath(searchPath: getenv("PATH").map { String(cString: $0) }) else {
            throw ControlError(.unavailable, "no_ffmpeg", "\(device.friendlyName) needs a \(plan.action.rawValue) (\(plan.reasons.joined(separator: "; "))) "
                               + "and ffmpeg is not installed (apt install ffmpeg)")
        }
        let folder: String
        do { folder = try MediaTranscode.makeFolder() } catch { throw ControlError(.internal, "transcode_failed", "\(error)") }
        var arguments = TranscodeArguments(input: path, folder: folder, plan: plan, streams: format.streams)
        arguments.start = start ?? 0
        // Hardware only when the config allows it and the render node exists; a failed hardware
        // start falls back to software once.
        if plan.transcodeVideo, mediaSettings.hardwareEncoding == .vaapi, access(mediaSettings.vaapiDevice, R_OK | W_OK) == 0 {
            arguments.vaapiDevice = mediaSettings.vaapiDevice
        }
        var attempts = arguments.vaapiDevice == nil ? [arguments] : [arguments, TranscodeArguments.software(arguments)]
        while !attempts.isEmpty {
            let attempt = attempts.removeFirst()
            let transcode: MediaTranscode
            do { transcode = try MediaTranscode.start(ffmpeg: ffmpeg, arguments: attempt, logSystem: logSystem) } catch {
                MediaTranscode.removeFolder(folder)
                throw ControlError(.internal, "transcode_failed", "\(device.friendlyName): \(error)")
            }
            transcodes[device.id] = transcode
            do {
                try await transcode.waitUntilPlayable(segments: 1, timeout: 60)
                break
            } catch {
                if !attempts.isEmpty {
                    log.warning("\(device.friendlyName): hardware encoding failed (\(error)); encoding in software", ["device": .string(device.id)])
                    transcodes[device.id] = nil
                    await transcode.stopKeepingFolder()
                    continue
                }
                await stopTranscode(device.id)
                throw ControlError(.internal, "transcode_failed", "\(device.friendlyName): \(error)")
            }
        }
        let name = "hls/"
        let hls = ServedFile(path: LocalMediaPolicy.realPath(folder) ?? folder, contentType: "application/x-mpegURL",
                             displayName: JobMedia.fileName(path))
        let server = try await serve(files: extra.merging([name: hls]) { a, _ in a }, to: device)
        var output = format
        output.contentType = "application/x-mpegURL"
        output.streamType = .buffered
        output.videoInfo = TranscodeArguments.outputVideo(format.videoInfo, plan: plan)
        output.hdrType = output.videoInfo?.hdrType ?? format.hdrType
        // The folder's name unencoded: the playlist's relative segment URLs resolve next to it.
        return (server.url(for: "hls") + "/" + TranscodeArguments.playlistName, "application/x-mpegURL", output, server)
    }

    /// Stops the device's ffmpeg child, if any.
    func stopTranscode(_ deviceID: String) async {
        guard let transcode = transcodes.removeValue(forKey: deviceID) else { return }
        await transcode.stop()
    }

    /// A seek on a device whose media is being transcoded waits (at most 30 s) until ffmpeg has
    /// written past the target, so the device finds the segment there.
    func awaitTranscoded(_ reference: String, to target: Double) async {
        guard let id = try? await registry.resolve(reference).device.id, let transcode = transcodes[id], !transcode.finished else { return }
        _ = await transcode.waitUntilWritten(target + Double(transcode.arguments.segmentSeconds), timeout: 30)
    }

    /// `--subtitles`: the tracks found for `media`, converted to WebVTT in a folder of the
    /// device's (replaced by its next cast). Returns the files to serve, by published name.
    func prepareSubtitles(_ given: String?, media: String, format: MediaFormatInfo?,
                          device: CastDevice) async throws(ControlError) -> [(name: String, file: ServedFile, source: SubtitleTracks.Source)] {
        if let old = subtitleFolders.removeValue(forKey: device.id) { MediaTranscode.removeFolder(old) }
        guard let given else { return [] }
        // A file named for subtitles, or found beside the media, is read by castline: the same
        // rule as the media's own (media.roots).
        let sources = try SubtitleTracks.find(given == "auto" ? given : ControlError.localMedia { () throws(LocalMediaError) in try self.media.policy.resolve(given, what: "subtitles") }.path,
                                              media: media, streams: format?.streams ?? [])
        for case .file(let path, _) in sources { _ = try ControlError.localMedia { () throws(LocalMediaError) in try self.media.policy.resolve(path, what: "subtitles") } }
        guard !sources.isEmpty else {
            log.info("no subtitles found for \(media)", ["media": .string(media)])
            return []
        }
        guard let ffmpeg = MediaTranscode.ffmpegPath(searchPath: getenv("PATH").map { String(cString: $0) }) else {
            throw ControlError(.unavailable, "no_ffmpeg", "subtitles are converted to WebVTT by ffmpeg, which is not installed (apt install ffmpeg)")
        }
        let folder: String
        do { folder = try MediaTranscode.makeFolder() } catch { throw ControlError(.internal, "subtitles_failed", "\(error)") }
        subtitleFolders[device.id] = folder
        var result: [(name: String, file: ServedFile, source: SubtitleTracks.Source)] = []
        for (i, source) in sources.prefix(8).enumerated() {
            let name = "subtitles-\(i + 1)\(source.language.map { "-\($0)" } ?? "").vtt"
            let output = folder + "/" + name
            do {
                try await MediaTranscode.run(ffmpeg: ffmpeg, arguments: SubtitleTracks.conversionArguments(source, media: media, output: output),
                                             errorLog: folder + "/ffmpeg-\(i + 1).log", timeout: 30)
            } catch {
                throw ControlError.usage("bad_subtitles", "cannot convert \(source.name) to WebVTT: \(error)")
            }
            result.append((name, ServedFile(path: LocalMediaPolicy.realPath(output) ?? output, contentType: "text/vtt"), source))
        }
        return result
    }

    /// The first MiB of a media URL (a Range request, 3 s at most), for the container probe:
    /// only for names or types of progressive media (`.mp4`, `video/webm`, …), not manifests or
    /// pages. nil when it cannot be read; the LOAD then goes out as before.
    func urlHead(_ media: String, contentType: String?) async -> [UInt8]? {
        guard let url = HTTPURL(media) else { return nil }
        let type = (contentType ?? ContentTypeGuess.forPath(media) ?? "").lowercased()
        guard type.hasPrefix("video/") || type.hasPrefix("audio/"), !type.contains("mpegurl") else { return nil }
        let limit = 1 << 20
        switch await HTTPExchange.request(.GET, url: url, headers: [("Range", "bytes=0-\(limit - 1)")], timeout: 3, maximumBody: limit, group: group) {
        case .success(let answer) where answer.status == 200 || answer.status == 206:
            return answer.body.isEmpty ? nil : answer.body
        default:
            return nil
        }
    }
}
