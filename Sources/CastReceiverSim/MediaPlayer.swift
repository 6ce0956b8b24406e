import CastCore
import CastLogging
import CastProtocol

/// The media namespace of a running media app: LOAD, transport controls, queue, clock.
///
/// Pure state machine: every call takes the time. Replies are ``EndpointReply``s addressed to
/// the requester or the other senders on the app's transportId; the device routes them.
/// `mediaSessionId` and `itemId` count up from 1 per device and survive app restarts.
struct MediaPlayer: Sendable {
    static let namespace = CastNamespace.media

    var timing: PlaybackTiming
    var rules: MediaRuleSet
    /// Of the running app; see ``AppDefinition/supportedMediaCommands``.
    var supportedMediaCommands: SupportedMediaCommands = []
    /// The running app's transportId (log field).
    var transportID = ""
    var session: MediaSession?
    var nextMediaSessionID = 1
    var nextItemID = 1
    /// ``ReceiverDevice/failNextLoad(_:)``: consumed by the next LOAD or QUEUE_LOAD.
    var pendingLoadFailure: DetailedErrorCode?
    /// The LOAD waiting for the server's media check, with its request id; its sender is kept
    /// by the device (``ReceiverDevice/loadRequester``).
    var pendingCheck: (request: MediaCheckRequest, requestID: RequestID)?
    /// Set by ``begin``: what the device must output for the media just loaded.
    var checkOutput: DeviceOutput?
    var random: IdentifierGenerator
    let log: Logger
    /// The rates SET_PLAYBACK_RATE and LOAD accept on this model (``DeviceProfile/playbackRates``).
    let playbackRates: ClosedRange<Double>
    /// How long after the playhead is set moving it really moves (``DeviceProfile/firstFrame``).
    var firstFrame: JitteredDelay
    /// Draws the first-frame jitter; its own generator, so shuffles stay as they were.
    var firstFrameRandom: IdentifierGenerator
    /// The device clock's drift (``DeviceProfile/clockDriftPPM``).
    private(set) var clockDriftPPM: Double
    /// Ground-truth changes the server has not taken yet (``ReceiverDevice/takePlaybackEvents()``),
    /// oldest first, at most ``maximumPendingEvents`` (a state machine without a server drops the oldest).
    var playbackEvents: [PlaybackEvent] = []
    static let maximumPendingEvents = 256
    /// The time of the latest ``advance(to:)``: every device entry point advances the player
    /// first, so it is the time of the call that drops a session in ``reset()``.
    var lastNow: Double = 0

    init(timing: PlaybackTiming, rules: MediaRuleSet, seed: UInt64, log: Logger,
         playbackRates: ClosedRange<Double> = DeviceProfile.defaultPlaybackRates, firstFrame: JitteredDelay = .zero,
         clockDriftPPM: Double = 0) {
        self.timing = timing
        self.rules = rules
        self.random = IdentifierGenerator(seed: seed)
        self.firstFrameRandom = IdentifierGenerator(seed: seed ^ 0xF125_7F4A_3E00_0001)
        self.log = log
        self.playbackRates = playbackRates
        self.firstFrame = firstFrame
        self.clockDriftPPM = clockDriftPPM
    }

    /// The device clock against real time (``MediaSession/clockRate``).
    var clockRate: Double { 1 + clockDriftPPM * 1e-6 }

    var logFields: LogFields {
        var fields: LogFields = ["session": .string(transportID)]
        if let session { fields["mediaSessionId"] = .int(session.mediaSessionID) }
        return fields
    }

    // MARK: Requests

    /// Handles one media-namespace message from a sender (after ``advance(to:)`` to `now`).
    mutating func handle(_ payload: CastMessage.Payload, now: Double) -> [EndpointReply] {
        observingPlayback(at: now) { player in player.handleRequest(payload, now: now) }
    }

    private mutating func handleRequest(_ payload: CastMessage.Payload, now: Double) -> [EndpointReply] {
        let requestID: RequestID
        let json: JSONValue
        switch RequestEnvelope(payload) {
        case .invalid(let id, let why):
            log.warning("rejected media request: \(why)", logFields.merging(["reason": "INVALID_COMMAND"]))
            return [reply(MediaMessage.invalidRequest(requestID: id, reason: .invalidCommand).json)]
        case .valid(let value, let id):
            json = value
            requestID = id
        }
        let message: MediaMessage
        do {
            message = try MediaMessage(json: json)
        } catch {
            log.warning("rejected media request: \(error)",
                        logFields.merging(["type": .string(json["type"]?.string ?? ""), "reason": "INVALID_PARAMS"]))
            return [reply(MediaMessage.invalidRequest(requestID: requestID, reason: .invalidParams).json)]
        }
        log.debug("media request \(message.typeName)",
                  logFields.merging(["type": .string(message.typeName), "requestId": .int(requestID.rawValue)]))
        switch message {
        case .load(let request): return load(request, now: now)
        case .queueLoad(let request): return queueLoad(request, now: now)
        case .getStatus: return [reply(statusMessage(requestID: requestID, now: now))]
        case .play(_, let id): return setPlaying(true, requestID: requestID, mediaSessionID: id, now: now)
        case .pause(_, let id): return setPlaying(false, requestID: requestID, mediaSessionID: id, now: now)
        case .stop(_, let id): return stop(requestID: requestID, mediaSessionID: id, now: now)
        case .seek(let request): return seek(request, now: now)
        case .setVolume(_, let id, let volume): return setStreamVolume(volume, requestID: requestID, mediaSessionID: id, now: now)
        case .setPlaybackRate(_, let id, let rate): return setPlaybackRate(rate, requestID: requestID, mediaSessionID: id, now: now)
        case .editTracksInfo(_, let id, let tracks): return editTracks(tracks, requestID: requestID, mediaSessionID: id, now: now)
        case .queueInsert(let request): return queueInsert(request, now: now)
        case .queueUpdate(let request): return queueUpdate(request, now: now)
        case .queueRemove(let request): return queueRemove(request, now: now)
        case .queueReorder(let request): return queueReorder(request, now: now)
        case .unknown(let type, let json): return unmodelled(type: type, json: json, requestID: requestID, now: now)
        case .mediaStatus, .loadFailed, .loadCancelled, .invalidPlayerState, .invalidRequest, .error:
            return rejectCommand(message.typeName, requestID: requestID)
        }
    }

    /// Queue commands the CastCore model has no case for; anything else is INVALID_COMMAND.
    private mutating func unmodelled(type: String, json: JSONValue, requestID: RequestID, now: Double) -> [EndpointReply] {
        let mediaSessionID = json["mediaSessionId"]?.int.map { Int(truncatingIfNeeded: $0) }
        switch type {
        case "QUEUE_NEXT", "QUEUE_PREV":
            return jump(type == "QUEUE_NEXT" ? 1 : -1, requestID: requestID, mediaSessionID: mediaSessionID, now: now)
        case "QUEUE_GET_ITEM_IDS":
            if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
            let ids = (session?.items ?? []).compactMap(\.itemID).map { JSONValue.int(Int64($0)) }
            return [reply(["type": "QUEUE_ITEM_IDS", "requestId": .int(Int64(requestID.rawValue)), "itemIds": .array(ids)])]
        case "QUEUE_GET_ITEMS":
            if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
            let wanted = Set((json["itemIds"]?.array ?? []).compactMap(\.int).map { Int(truncatingIfNeeded: $0) })
            let items = (session?.items ?? []).filter { wanted.contains($0.itemID ?? -1) }.map(\.json)
            return [reply(["type": "QUEUE_ITEMS", "requestId": .int(Int64(requestID.rawValue)), "items": .array(items)])]
        default:
            return rejectCommand(type, requestID: requestID)
        }
    }

    func rejectCommand(_ type: String, requestID: RequestID) -> [EndpointReply] {
        log.warning("unknown media command \(type)", logFields.merging(["type": .string(type), "reason": "INVALID_COMMAND"]))
        return [reply(MediaMessage.invalidRequest(requestID: requestID, reason: .invalidCommand).json)]
    }

    /// nil when a session exists and `mediaSessionId` (if given) names it; otherwise the error
    /// reply: INVALID_PLAYER_STATE without a session, INVALID_MEDIA_SESSION_ID for another id.
    func check(requestID: RequestID, mediaSessionID: Int?) -> [EndpointReply]? {
        guard let session else {
            log.warning("media command without a media session", logFields.merging(["reason": "INVALID_PLAYER_STATE"]))
            return [reply(MediaMessage.invalidPlayerState(requestID: requestID).json)]
        }
        if let mediaSessionID, mediaSessionID != session.mediaSessionID {
            log.warning("media command for session \(mediaSessionID), current is \(session.mediaSessionID)",
                        logFields.merging(["reason": "INVALID_MEDIA_SESSION_ID"]))
            return [reply(MediaMessage.invalidRequest(requestID: requestID, reason: .invalidMediaSessionID).json)]
        }
        return nil
    }

    func invalidParams(_ requestID: RequestID, _ why: String) -> [EndpointReply] {
        log.warning("rejected media request: \(why)", logFields.merging(["reason": "INVALID_PARAMS"]))
        return [reply(MediaMessage.invalidRequest(requestID: requestID, reason: .invalidParams).json)]
    }

    // MARK: LOAD

    mutating func load(_ request: LoadRequest, now: Double) -> [EndpointReply] {
        let item = QueueItem(media: request.media, autoplay: request.autoplay ?? true,
                             activeTrackIDs: request.activeTrackIDs, customData: request.customData)
        return begin(items: [item], startIndex: 0, isQueue: false, repeatMode: .off, position: request.currentTime,
                     playbackRate: request.playbackRate, activeTrackIDs: request.activeTrackIDs,
                     requestID: request.requestID, now: now)
    }

    /// A new media session with `items` (LOAD, QUEUE_LOAD): the old one is INTERRUPTED first.
    mutating func begin(
        items: [QueueItem], startIndex: Int, isQueue: Bool, repeatMode: RepeatMode, position: Double?,
        playbackRate: Double?, activeTrackIDs: [Int]?, requestID: RequestID, now: Double
    ) -> [EndpointReply] {
        let first = items[startIndex].media ?? MediaInformation(contentID: "", contentType: "")
        let rule = rules.match(first)
        var out = interrupt(now: now)
        if let code = pendingLoadFailure ?? rule?.loadError ?? Self.unplayable(first.contentType) {
            let injected = pendingLoadFailure != nil
            pendingLoadFailure = nil
            log.warning("LOAD of \(first.contentID) fails with \(code)\(injected ? " (injected)" : "")",
                        logFields.merging(["contentId": .string(first.contentID), "detailedErrorCode": .int(code.rawValue)]))
            out.append(reply(MediaMessage.loadFailed(requestID: requestID, itemID: nil, detailedErrorCode: code).json))
            return out
        }
        var numbered = items
        for index in numbered.indices {
            numbered[index].itemID = nextItemID
            nextItemID += 1
            numbered[index].media = numbered[index].media.map(Self.categorised)
        }
        var session = MediaSession(mediaSessionID: nextMediaSessionID, items: numbered, currentIndex: startIndex, isQueue: isQueue)
        nextMediaSessionID += 1
        session.repeatMode = repeatMode
        // A rate outside the model's range is ignored (the media plays at 1), as before ranges
        // were per model; SET_PLAYBACK_RATE answers INVALID_PARAMS for the same rates.
        if let playbackRate, playbackRates.contains(playbackRate) { session.playbackRate = playbackRate }
        session.clockRate = clockRate
        session.activeTrackIDs = activeTrackIDs ?? numbered[startIndex].activeTrackIDs
        session.start(index: startIndex, at: now, position: position, autoplay: numbered[startIndex].autoplay ?? true,
                      delay: timing.bufferingDelay, rule: rule)
        self.session = session
        startMovingIfPlaying(at: now)
        log.info("loaded \(first.contentID) (\(first.contentType), \(first.streamType))", logFields.merging([
            "contentId": .string(first.contentID), "contentType": .string(first.contentType), "items": .int(numbered.count),
        ]))
        if timing.sendsLoadingStatus { out.append(EndpointReply(Self.namespace, loadingStatusMessage(), to: .everyone)) }
        if timing.checksLoopbackMedia {
            let url = MediaURLPolicy.url(of: first)
            guard MediaURLPolicy.isCheckable(url) else {
                checkOutput = .mediaNotChecked(url: url)
                out += statusToAll(requestID: requestID, now: now)
                return out
            }
            // The reply waits for the fetch, as a receiver answers a LOAD once the media loaded.
            let request = MediaCheckRequest(mediaSessionID: session.mediaSessionID, url: url, contentType: first.contentType,
                                            textTracks: first.tracks.filter { $0.type == .text }.compactMap(\.trackContentID))
            self.session!.awaitingCheck = true
            pendingCheck = (request, requestID)
            checkOutput = .checkMedia(request)
            log.info("LOAD of \(url): the reply waits for the media fetch", logFields.merging(["url": .string(url)]))
            return out
        }
        out += statusToAll(requestID: requestID, now: now)
        return out
    }

    /// A content type no media player plays (a web page, plain text): the receiver fails the
    /// LOAD with MEDIA_SRC_NOT_SUPPORTED, as a Default Media Receiver does with `text/html`.
    static func unplayable(_ contentType: String) -> DetailedErrorCode? {
        let type = contentType.lowercased().split(separator: ";").first.map { $0.filter { $0 != " " } } ?? ""
        return ["text/html", "application/xhtml+xml", "text/plain"].contains(type) ? .mediaSrcNotSupported : nil
    }

    /// `media` with the `mediaCategory` current firmware adds from the content type (VIDEO,
    /// AUDIO, IMAGE; Tests/Fixtures/real/media-loading-2020.json) when the sender gave none.
    static func categorised(_ media: MediaInformation) -> MediaInformation {
        guard media.mediaCategory == nil else { return media }
        var media = media
        let type = media.contentType.lowercased()
        if type.hasPrefix("video/") || type.contains("mpegurl") || type.contains("dash+xml") {
            media.mediaCategory = .video
        } else if type.hasPrefix("audio/") {
            media.mediaCategory = .audio
        } else if type.hasPrefix("image/") {
            media.mediaCategory = .image
        }
        return media
    }

    /// The server fetched the media of the LOAD waiting in ``pendingCheck``: on success the
    /// LOAD is answered and buffering starts now; on failure the LOAD's sender gets LOAD_FAILED
    /// with `failure`, and every sender MEDIA_STATUS IDLE / ERROR. Nil when no LOAD waits for
    /// `mediaSessionID` (it was replaced or stopped meanwhile).
    mutating func mediaChecked(mediaSessionID: Int, failure: DetailedErrorCode?, reason: String, videoInfo: VideoInfo? = nil,
                               duration: Double? = nil, now: Double) -> [EndpointReply]? {
        observingPlayback(at: now) { player in
            player.takeMediaCheck(mediaSessionID: mediaSessionID, failure: failure, reason: reason, videoInfo: videoInfo,
                                  duration: duration, now: now)
        }
    }

    private mutating func takeMediaCheck(mediaSessionID: Int, failure: DetailedErrorCode?, reason: String, videoInfo: VideoInfo?,
                                         duration: Double?, now: Double) -> [EndpointReply]? {
        guard let pending = pendingCheck, pending.request.mediaSessionID == mediaSessionID,
              var current = session, current.mediaSessionID == mediaSessionID else { return nil }
        pendingCheck = nil
        current.awaitingCheck = false
        let fields = logFields.merging(["url": .string(pending.request.url), "reason": .string(reason)])
        guard let failure else {
            current.probedVideoInfo = videoInfo
            current.probedDuration = duration
            if current.playerState == .buffering {
                current.anchor = now
                current.bufferingUntil = now + max(0, timing.bufferingDelay)
            }
            session = current
            log.info("media fetched: \(pending.request.url) (\(reason))", fields)
            // Delivered with the LOAD's sender as the requester (``ReceiverDevice/mediaChecked``).
            return statusToAll(requestID: pending.requestID, now: now)
        }
        log.warning("LOAD of \(pending.request.url) fails with \(failure): \(reason)",
                    fields.merging(["detailedErrorCode": .int(failure.rawValue)]))
        // As real devices send it (Tests/Fixtures/real/load-failed-2020.json): LOAD_FAILED with the
        // item's id, then an IDLE / ERROR status without the media, to every sender.
        let failed = EndpointReply(Self.namespace, MediaMessage.loadFailed(requestID: pending.requestID, itemID: current.currentItem.itemID,
                                                                          detailedErrorCode: failure).json, to: .loadRequester)
        var status = MediaStatus(mediaSessionID: current.mediaSessionID, playerState: .idle, idleReason: .error, currentTime: 0,
                                 playbackRate: current.playbackRate, supportedMediaCommands: supportedMediaCommands,
                                 volume: current.volume)
        status.currentItemID = current.currentItem.itemID
        session = nil
        log.info("media session ends: IDLE ERROR", logFields.merging(["playerState": "IDLE", "idleReason": "ERROR",
                                                                      "mediaSessionId": .int(current.mediaSessionID)]))
        return [failed] + deliver(status: [status], requestID: nil)
    }

    /// Ends the current session with IDLE / INTERRUPTED, told to every connected sender.
    mutating func interrupt(now: Double) -> [EndpointReply] {
        end(reason: .interrupted, requestID: nil, now: now)
    }

    /// Reports the session IDLE with `reason` and drops it: to the requester with `requestId`
    /// and to the others with 0 (everyone with 0 when `requestId` is nil).
    mutating func end(reason: IdleReason, requestID: RequestID?, now: Double) -> [EndpointReply] {
        guard var ending = session else { return [] }
        var out: [EndpointReply] = []
        if let pending = pendingCheck, pending.request.mediaSessionID == ending.mediaSessionID {
            // Replaced or stopped while its media was being fetched: the LOAD is cancelled.
            pendingCheck = nil
            out.append(EndpointReply(Self.namespace, MediaMessage.loadCancelled(requestID: pending.requestID, itemID: nil).json,
                                     to: .loadRequester))
        }
        ending.settle(at: now)
        log.info("media session ends: IDLE \(reason)", logFields.merging(["playerState": "IDLE", "idleReason": .string(reason.rawValue)]))
        var status = mediaStatus(of: ending, now: now)
        status.playerState = .idle
        status.idleReason = reason
        session = nil
        return out + deliver(status: [status], requestID: requestID)
    }

    // MARK: Transport controls

    mutating func setPlaying(_ playing: Bool, requestID: RequestID, mediaSessionID: Int?, now: Double) -> [EndpointReply] {
        if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
        let changed = session!.setPlaying(playing, at: now)
        if changed && playing { startMovingIfPlaying(at: now) }
        if changed { log.info(playing ? "PLAY" : "PAUSE", logFields.merging(["playerState": .string(session!.playerState.rawValue)])) }
        return changed ? statusToAll(requestID: requestID, now: now) : [reply(statusMessage(requestID: requestID, now: now))]
    }

    mutating func stop(requestID: RequestID, mediaSessionID: Int?, now: Double) -> [EndpointReply] {
        if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
        return end(reason: .cancelled, requestID: requestID, now: now)
    }

    mutating func seek(_ request: SeekRequest, now: Double) -> [EndpointReply] {
        if let error = check(requestID: request.requestID, mediaSessionID: request.mediaSessionID) { return error }
        var session = self.session!
        session.settle(at: now)
        let target = request.currentTime ?? (session.position + (request.relativeTime ?? 0))
        session.position = session.clampedPosition(target)
        switch request.resumeState {
        case .playbackStart?: _ = session.setPlaying(true, at: now)
        case .playbackPause?: _ = session.setPlaying(false, at: now)
        default: break
        }
        session.seeks += 1
        self.session = session
        // A jump while playing (or with PLAYBACK_START) restarts the playhead: first frame again.
        startMovingIfPlaying(at: now)
        log.info("SEEK to \(session.position)", logFields.merging(["currentTime": .double(session.position)]))
        return statusToAll(requestID: request.requestID, now: now)
    }

    mutating func setStreamVolume(_ volume: Volume, requestID: RequestID, mediaSessionID: Int, now: Double) -> [EndpointReply] {
        if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
        if let level = volume.level { session!.volume.level = level.isNaN ? 0 : min(1, max(0, level)) }
        if let muted = volume.muted { session!.volume.muted = muted }
        return statusToAll(requestID: requestID, now: now)
    }

    mutating func setPlaybackRate(_ rate: Double, requestID: RequestID, mediaSessionID: Int, now: Double) -> [EndpointReply] {
        if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
        guard playbackRates.contains(rate) else {
            return invalidParams(requestID, "playbackRate \(rate) outside this model's \(playbackRates.lowerBound)…\(playbackRates.upperBound)")
        }
        // At once and smoothly: the position so far at the old rate, from now on the new one.
        // (Whether a real player changes rate this smoothly, for a small nudge such as 1.02, is
        // untested on real devices.)
        session!.settle(at: now)
        session!.playbackRate = rate
        return statusToAll(requestID: requestID, now: now)
    }

    mutating func editTracks(_ trackIDs: [Int]?, requestID: RequestID, mediaSessionID: Int, now: Double) -> [EndpointReply] {
        if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
        if let trackIDs { session!.activeTrackIDs = trackIDs }
        return statusToAll(requestID: requestID, now: now)
    }

    /// Drops the session silently (the app stopped); the ground truth records its end at the
    /// time of the call (``lastNow``).
    mutating func reset() {
        let before = session
        session = nil
        pendingCheck = nil
        notePlayback(from: before, at: lastNow)
    }

    /// Puts an exported session in place (stream transfer): BUFFERING, then the old state.
    mutating func restore(_ media: TransferredMedia, now: Double) {
        guard !media.items.isEmpty, media.items.allSatisfy({ $0.media != nil }) else { return }
        var session = MediaSession(mediaSessionID: nextMediaSessionID, items: media.items,
                                   currentIndex: max(0, media.items.firstIndex { $0.itemID == media.currentItemID } ?? 0),
                                   isQueue: media.isQueue)
        nextMediaSessionID += 1
        nextItemID = max(nextItemID, (media.items.compactMap(\.itemID).max() ?? 0) + 1)
        session.repeatMode = media.repeatMode
        if playbackRates.contains(media.playbackRate) { session.playbackRate = media.playbackRate }
        session.clockRate = clockRate
        session.volume = media.volume
        session.activeTrackIDs = media.activeTrackIDs
        session.start(index: session.currentIndex, at: now, position: media.currentTime, autoplay: media.playerState != .paused,
                      delay: timing.bufferingDelay, rule: rules.match(media.media))
        let before = self.session
        self.session = session
        startMovingIfPlaying(at: now)
        notePlayback(from: before, at: now)
        log.info("resumed transferred media \(media.media.contentID) at \(media.currentTime)", logFields)
    }
}

// MARK: Sync: first frame, drift, ground truth

extension MediaPlayer {
    /// The playhead was just set PLAYING at `now` from a stop: it moves after the first frame.
    /// Nothing while BUFFERING or PAUSED.
    mutating func startMovingIfPlaying(at now: Double) {
        guard session?.playerState == .playing else { return }
        let delay = firstFrame.isZero ? 0 : firstFrame.draw(&firstFrameRandom)
        session!.startMoving(at: now, firstFrame: delay)
    }

    /// A new clock drift from `now` on (the position so far stays).
    mutating func setClockDrift(ppm: Double, now: Double) {
        let before = session
        clockDriftPPM = ppm
        let rate = clockRate
        session?.settle(at: now)
        session?.clockRate = rate
        notePlayback(from: before, at: now)
    }

    /// Runs `body` and records the ground-truth change it made at `now`, if any.
    mutating func observingPlayback<T>(at now: Double, _ body: (inout MediaPlayer) -> T) -> T {
        let before = session
        let result = body(&self)
        notePlayback(from: before, at: now)
        return result
    }

    /// Appends a ``PlaybackEvent`` when the session's motion differs from `before`'s.
    mutating func notePlayback(from before: MediaSession?, at now: Double) {
        let after = session
        guard before?.motion != after?.motion else { return }
        let event: PlaybackEvent
        if let after {
            let change: PlaybackEvent.Change
            if let before, before.mediaSessionID == after.mediaSessionID, before.currentItem.itemID == after.currentItem.itemID {
                if before.seeks != after.seeks {
                    change = .seek
                } else if before.motion.playing != after.motion.playing {
                    change = after.motion.playing ? .start : .stop
                } else if before.movingSince != after.movingSince {
                    change = .start
                } else {
                    change = .rate
                }
            } else {
                change = .item
            }
            event = PlaybackEvent(change: change, truth: after.truth(at: now))
        } else if let before {
            var truth = before.truth(at: now)
            truth.playing = false
            event = PlaybackEvent(change: .end, truth: truth)
        } else {
            return
        }
        playbackEvents.append(event)
        if playbackEvents.count > Self.maximumPendingEvents { playbackEvents.removeFirst(playbackEvents.count - Self.maximumPendingEvents) }
        log.debug("playback \(event.change.rawValue)", logFields.merging([
            "change": .string(event.change.rawValue), "position": .double(event.truth.position), "rate": .double(event.truth.rate),
            "playing": .bool(event.truth.playing),
        ]))
    }
}
