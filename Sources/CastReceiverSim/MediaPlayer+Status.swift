import CastCore
import CastLogging

extension MediaPlayer {
    // MARK: Replies

    func reply(_ json: JSONValue) -> EndpointReply {
        EndpointReply(Self.namespace, json, to: .requester)
    }

    /// MEDIA_STATUS with the current session (`status: []` without one).
    func statusMessage(requestID: RequestID, now: Double) -> JSONValue {
        MediaMessage.mediaStatus(requestID: requestID, status: session.map { [mediaStatus(of: $0, now: now)] } ?? []).json
    }

    /// The current status to the requester (with `requestId`) and to the other senders (0).
    func statusToAll(requestID: RequestID, now: Double) -> [EndpointReply] {
        deliver(status: session.map { [mediaStatus(of: $0, now: now)] } ?? [], requestID: requestID)
    }

    /// `status` to the requester with `requestId` and to the others with 0; to everyone with 0
    /// when `requestId` is nil (unsolicited).
    func deliver(status: [MediaStatus], requestID: RequestID?) -> [EndpointReply] {
        guard let requestID else {
            return [EndpointReply(Self.namespace, MediaMessage.mediaStatus(requestID: .unsolicited, status: status).json, to: .everyone)]
        }
        return [
            EndpointReply(Self.namespace, MediaMessage.mediaStatus(requestID: requestID, status: status).json, to: .requester),
            EndpointReply(Self.namespace, MediaMessage.mediaStatus(requestID: .unsolicited, status: status).json, to: .others),
        ]
    }

    /// One `status[]` entry for `session` at `now`.
    func mediaStatus(of session: MediaSession, now: Double) -> MediaStatus {
        if session.awaitingCheck { return loadingStatus(of: session) }
        var media = session.currentMedia
        // The device fills in the duration it knows (from the media, a rule, else the hint).
        if let duration = session.duration { media.duration = duration }
        var commands = supportedMediaCommands
        if session.items.count > 1 { commands.formUnion([.queueNext, .queuePrev]) }
        var status = MediaStatus(
            mediaSessionID: session.mediaSessionID, playerState: session.playerState, currentTime: session.currentTime(at: now),
            playbackRate: session.playbackRate, supportedMediaCommands: commands, volume: session.volume, media: media
        )
        status.currentItemID = session.currentItem.itemID
        status.repeatMode = session.repeatMode
        if session.isQueue { status.items = session.items }
        status.activeTrackIDs = session.activeTrackIDs
        status.videoInfo = session.rule?.videoInfo ?? session.probedVideoInfo
        return status
    }

    /// What real firmware sends right after accepting a LOAD: top-level IDLE without
    /// idleReason, `extendedStatus.playerState` LOADING with the new media.
    func loadingStatusMessage() -> JSONValue {
        guard let session else { return MediaMessage.mediaStatus(requestID: .unsolicited, status: []).json }
        return MediaMessage.mediaStatus(requestID: .unsolicited, status: [loadingStatus(of: session)]).json
    }

    /// The loading shape of `session`'s status (also while its media is being fetched): as real
    /// devices send it, the new media both top-level and in `extendedStatus`, with
    /// `currentItemId` and `repeatMode` (Tests/Fixtures/real/media-loading-*.json).
    func loadingStatus(of session: MediaSession) -> MediaStatus {
        var status = MediaStatus(
            mediaSessionID: session.mediaSessionID, playerState: .idle, currentTime: 0, playbackRate: session.playbackRate,
            supportedMediaCommands: supportedMediaCommands, volume: session.volume, media: session.currentMedia,
            extendedStatus: ExtendedMediaStatus(playerState: .loading, media: session.currentMedia, mediaSessionID: session.mediaSessionID)
        )
        status.currentItemID = session.currentItem.itemID
        status.repeatMode = session.repeatMode
        return status
    }

    // MARK: Clock

    /// When ``advance(to:)`` next has work; nil = nothing timed pending.
    var nextDeadline: Double? { session?.deadline }

    /// Runs the timed transitions up to `now`, each at its own time: BUFFERING → PLAYING/PAUSED,
    /// end of an item → next queue item (per repeatMode) or IDLE / FINISHED. Every change goes
    /// to every connected sender with requestId 0.
    mutating func advance(to now: Double) -> [EndpointReply] {
        lastNow = now
        var out: [EndpointReply] = []
        var steps = 0
        while let current = session, let deadline = current.deadline, deadline <= now, steps < 256 {
            steps += 1
            defer { notePlayback(from: current, at: deadline) }
            if current.playerState == .buffering {
                session!.finishBuffering(at: deadline)
                startMovingIfPlaying(at: deadline)
                log.info("\(session!.playerState) after buffering", logFields.merging(["playerState": .string(session!.playerState.rawValue)]))
                out += deliver(status: [mediaStatus(of: session!, now: deadline)], requestID: nil)
            } else {
                out += itemFinished(at: deadline)
            }
        }
        return out
    }

    /// The current item played to its end at `time`.
    private mutating func itemFinished(at time: Double) -> [EndpointReply] {
        guard var current = session else { return [] }
        current.settle(at: time)
        session = current
        guard let next = current.indexAfterFinish() else {
            return end(reason: .finished, requestID: nil, now: time)
        }
        startItem(next, at: time, position: nil)
        log.info("next queue item \(session!.currentItem.itemID ?? 0)", logFields.merging(["itemId": .int(session!.currentItem.itemID ?? 0)]))
        return deliver(status: [mediaStatus(of: session!, now: time)], requestID: nil)
    }

    /// Switches to item `index` (BUFFERING, then as the item's autoplay says, default play).
    mutating func startItem(_ index: Int, at time: Double, position: Double?) {
        guard var current = session else { return }
        let item = current.items[index]
        current.start(index: index, at: time, position: position, autoplay: item.autoplay ?? true,
                      delay: timing.bufferingDelay, rule: item.media.flatMap { rules.match($0) })
        if let tracks = item.activeTrackIDs { current.activeTrackIDs = tracks }
        session = current
        startMovingIfPlaying(at: time)
    }

    // MARK: Transfer

    /// The session as it stands at `now`, for stream transfer.
    func export(now: Double) -> TransferredMedia? {
        guard let session else { return nil }
        let state: PlayerState = session.playerState == .buffering ? (session.resumePlaying ? .playing : .paused) : session.playerState
        return TransferredMedia(
            items: session.items, currentItemID: session.currentItem.itemID ?? 0, currentTime: session.currentTime(at: now),
            playerState: state, playbackRate: session.playbackRate, repeatMode: session.repeatMode, isQueue: session.isQueue,
            activeTrackIDs: session.activeTrackIDs, volume: session.volume
        )
    }
}
