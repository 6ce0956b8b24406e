import CastCore
import CastLogging
import CastProtocol
import CastReceiverSim
import Dispatch
import NIOCore

extension SimulatedDevice {
    /// How many fetch results a device keeps for the control socket's `list`.
    static let mediaFetchHistory = 20

    /// A LOAD waits for its media (``DeviceOutput/checkMedia(_:)``): fetch the first 64 KiB as a
    /// receiver does, judge the result as a receiver would (``MediaCheckVerdict``), and let the
    /// state machine answer the LOAD. Only loopback URLs get here: tests and demos never send
    /// traffic elsewhere. The result is logged, written to the frame log (`mediaChecked`) and
    /// listed under `mediaFetches` in `list`. Called on the device's loop.
    func checkMedia(_ request: MediaCheckRequest) {
        // From the device's own address, as a real device fetches.
        let media = MediaFetcher.fetch(url: request.url, timeout: settings.mediaFetchTimeout, group: loop, source: configuration.address)
        let texts = TextTrackCheck.fetchAll(request.textTracks, timeout: settings.mediaFetchTimeout, group: loop, source: configuration.address)
        media.and(texts).whenSuccess { [self] result, tracks in
            var fetched = MediaCheckVerdict.judge(result, contentType: request.contentType)
            if fetched.failure == nil, let problem = tracks.compactMap(\.problem).first {
                fetched = MediaCheckVerdict(failure: .textUnknown, reason: problem, kind: "text-track")
            }
            guard fetched.failure == nil else { return report(request, result, fetched, videoInfo: nil, duration: nil, tracks: tracks) }
            let looksPlayable = fetched
            // Bytes that look like media: what a device of this model makes of their streams.
            let family = DeviceCapabilityTable.shared.family(model: configuration.model, videoOut: configuration.profile.isVideoDevice)
            Self.judgeQueue.async { [self] in
                let judged = MediaStreamJudge(timeout: max(2, settings.mediaFetchTimeout)).judge(url: request.url, contentType: request.contentType, family: family)
                var verdict = looksPlayable
                if let judged {
                    verdict.failure = judged.failure
                    verdict.reason = looksPlayable.reason + "; " + judged.reason
                    if judged.failure != nil { verdict.kind = "unplayable" }
                }
                report(request, result, verdict, videoInfo: judged?.videoInfo, duration: judged?.duration, tracks: tracks)
            }
        }
    }

    /// ffprobe runs here, off the event loops.
    static let judgeQueue = DispatchQueue(label: "castline.sim.media-judge", attributes: .concurrent)

    /// Logs the verdict and lets the state machine answer the LOAD (on the device's loop).
    private func report(_ request: MediaCheckRequest, _ result: MediaFetchResult, _ verdict: MediaCheckVerdict, videoInfo: VideoInfo?,
                        duration: Double?, tracks: [TextTrackCheck]) {
        loop.execute { [self] in
            mediaFetches.append(result.jsonValue)
            if mediaFetches.count > Self.mediaFetchHistory { mediaFetches.removeFirst(mediaFetches.count - Self.mediaFetchHistory) }
            var fields: JSONObject = [
                "url": .string(request.url), "mediaSessionId": .int(Int64(request.mediaSessionID)),
                "result": .string(verdict.kind), "reason": .string(verdict.reason),
            ]
            if let status = result.status { fields.set("status", .int(Int64(status))) }
            if let code = verdict.failure { fields.set("detailedErrorCode", .int(Int64(code.rawValue))) }
            if let videoInfo { fields.set("videoInfo", videoInfo.json) }
            if let duration { fields.set("duration", .double(duration)) }
            if !tracks.isEmpty { fields.set("textTracks", .array(tracks.map(\.json))) }
            frameLogEvent("mediaChecked", connection: nil, peer: nil, fields: fields)
            let logFields: LogFields = [
                "url": .string(request.url), "result": .string(verdict.kind), "status": .int(result.status ?? 0),
                "bytes": .int(result.bytes), "detailedErrorCode": .int(verdict.failure?.rawValue ?? 0),
            ]
            if let code = verdict.failure {
                log.warning("media check failed: \(request.url): \(verdict.reason) → LOAD_FAILED \(code.name ?? "") (\(code.rawValue))", logFields)
            } else {
                log.info("media checked: \(request.url): \(verdict.reason)", logFields)
            }
            mutateState { state, now in
                state.mediaChecked(mediaSessionID: request.mediaSessionID, failure: verdict.failure, reason: verdict.reason,
                                   videoInfo: videoInfo, duration: duration, now: now)
            }
        }
    }

    /// A LOAD of media the simulator does not fetch plays unchecked; the frame log says so.
    func noteMediaNotChecked(url: String) {
        log.debug("media not checked: \(url) is not an http:// URL on a loopback host", ["url": .string(url)])
        frameLogEvent("mediaNotChecked", connection: nil, peer: nil, fields: [
            "url": .string(url), "reason": "not an http:// URL on a loopback host: plays unchecked",
        ])
    }
}
