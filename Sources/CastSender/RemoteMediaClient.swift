import CastCore
import CastLogging
import CastProtocol
import Synchronization

/// Options of a LOAD. Value type.
public struct MediaLoadOptions: Sendable, Equatable {
    public var autoplay: Bool
    /// Seconds into the media.
    public var startTime: Double?
    public var activeTrackIDs: [Int]?
    public var playbackRate: Double?
    public var customData: JSONValue?
    /// Request timeout; nil = the session's default.
    public var timeout: Double?

    public init(autoplay: Bool = true, startTime: Double? = nil, activeTrackIDs: [Int]? = nil, playbackRate: Double? = nil,
                customData: JSONValue? = nil, timeout: Double? = nil) {
        self.autoplay = autoplay
        self.startTime = startTime
        self.activeTrackIDs = activeTrackIDs
        self.playbackRate = playbackRate
        self.customData = customData
        self.timeout = timeout
    }
}

/// Hears media status changes (held weakly). Called on the session's executor, usually its
/// event loop's thread: keep the work short and never block (see ``CastSessionListener``).
public protocol RemoteMediaClientListener: AnyObject, Sendable {
    /// `status` nil: no media session (nothing loaded, or the app went away).
    func remoteMediaClient(_ client: RemoteMediaClient, didUpdate status: MediaStatus?)
}

/// Playback control of the session's app over `urn:x-cast:com.google.cast.media`
/// (GCKRemoteMediaClient). Every command returns a ``CastRequest`` whose value is the
/// MEDIA_STATUS entry of the reply (nil when the reply has none, e.g. after STOP).
///
/// Commands that need a media session (everything but load, queue load and status) fail at once
/// with ``CastRequestError/invalidPlayerState`` when there is none. Thread-safe.
public final class RemoteMediaClient: Sendable {
    private struct State {
        var status: MediaStatus?
        var receivedAt: Double?
        weak var session: CastSession?
        /// What the screen shows, as last logged (``OnScreen``).
        var onScreen = OnScreen(content: nil, playback: "none")
    }

    /// The media on the screen, as the proof-of-display report reads it: the content (its URL or
    /// id) and whether it plays (`playing`: PLAYING or BUFFERING; `paused`; `idle`, with why;
    /// `none`: no media session). A change is one info record (`display: media`), never a
    /// status that only moves the playhead.
    struct OnScreen: Equatable {
        var content: String?
        var playback: String

        init(content: String?, playback: String) {
            self.content = content
            self.playback = playback
        }

        /// `url` with a served file's capability token (a first path segment of 32 hex digits,
        /// as castline's media server issues) shown as `…`: a record never carries a token.
        static func withoutToken(_ url: String) -> String {
            guard let scheme = url.firstRange(of: "://"), let slash = url[scheme.upperBound...].firstIndex(of: "/") else { return url }
            let path = url[url.index(after: slash)...]
            let segment = path.prefix { $0 != "/" }
            guard segment.count == 32, segment.allSatisfy({ $0.isHexDigit }) else { return url }
            return String(url[..<url.index(after: slash)]) + "…" + String(path.dropFirst(32))
        }

        /// From a status; `previous` keeps the content when a partial status omits the media.
        init(_ status: MediaStatus?, previous: OnScreen) {
            guard let status else {
                self.init(content: nil, playback: "none")
                return
            }
            let media = status.effectiveMedia
            let content = media.map { Self.withoutToken($0.contentURL ?? $0.contentID) } ?? (previous.playback == "none" ? nil : previous.content)
            if status.isLoading {
                // The next item loading: the screen shows what it showed until it plays.
                self.init(content: previous.content ?? content, playback: previous.playback == "none" ? "idle" : previous.playback)
                return
            }
            switch status.playerState {
            case .playing, .buffering: self.init(content: content, playback: "playing")
            case .paused: self.init(content: content, playback: "paused")
            default: self.init(content: content, playback: status.idleReason.map { "idle (\($0.rawValue))" } ?? "idle")
            }
        }
    }

    private let state = Mutex(State())
    private let listeners = WeakListeners<any RemoteMediaClientListener>()
    private let fanout: EventFanout<MediaStatus?>
    private let log: Logger

    init(logSystem: LogSystem, device: String) {
        log = Logger(class: "RemoteMediaClient", system: logSystem).with(["device": .string(device)])
        fanout = EventFanout("media status", log: log)
    }

    func attach(_ session: CastSession) {
        state.withLock { $0.session = session }
    }

    /// The latest media status (first entry of the last MEDIA_STATUS).
    public var mediaStatus: MediaStatus? { state.withLock { $0.status } }

    /// When the latest MEDIA_STATUS arrived (monotonic seconds, ``MonotonicClock``), for
    /// estimating the position since; nil before the first.
    public var statusReceivedAt: Double? { state.withLock { $0.receivedAt } }

    public func addListener(_ listener: any RemoteMediaClientListener) { listeners.add(listener) }
    public func removeListener(_ listener: any RemoteMediaClientListener) { listeners.remove(listener) }

    /// Every status change from now on.
    public func statusUpdates() -> AsyncStream<MediaStatus?> { fanout.stream() }

    // MARK: - Commands

    /// Loads `media` (replacing what plays). A second load before the first answers supersedes it.
    public func load(_ media: MediaInformation, options: MediaLoadOptions = MediaLoadOptions()) async -> CastRequest<MediaStatus?> {
        if media.contentType.hasPrefix("video/"), let session = state.withLock({ $0.session }), await session.isAudioOnly {
            log.warning("loading \(media.contentType) on an audio-only device (its certificate carries the audio-only policy)", [
                "contentType": .string(media.contentType), "audioOnly": .bool(true),
            ])
        }
        return await command("LOAD", needsMediaSession: false, timeout: options.timeout, supersedes: true) { id, _, sessionID in
            LoadRequest(requestID: id, sessionID: sessionID, media: media, autoplay: options.autoplay, currentTime: options.startTime,
                        activeTrackIDs: options.activeTrackIDs, playbackRate: options.playbackRate,
                        customData: options.customData).json
        }
    }

    public func play() async -> CastRequest<MediaStatus?> {
        await command("PLAY") { id, media, _ in MediaMessage.play(requestID: id, mediaSessionID: media).json }
    }

    public func pause() async -> CastRequest<MediaStatus?> {
        await command("PAUSE") { id, media, _ in MediaMessage.pause(requestID: id, mediaSessionID: media).json }
    }

    public func stop() async -> CastRequest<MediaStatus?> {
        await command("STOP") { id, media, _ in MediaMessage.stop(requestID: id, mediaSessionID: media).json }
    }

    /// Seeks to `position` seconds; `resumeState` PLAYBACK_START / PLAYBACK_PAUSE or unchanged.
    public func seek(to position: Double, resumeState: ResumeState? = nil) async -> CastRequest<MediaStatus?> {
        await command("SEEK") { id, media, _ in
            SeekRequest(requestID: id, mediaSessionID: media ?? 0, currentTime: position, resumeState: resumeState).json
        }
    }

    /// Seeks by `offset` seconds from the current position.
    public func seek(by offset: Double, resumeState: ResumeState? = nil) async -> CastRequest<MediaStatus?> {
        await command("SEEK") { id, media, _ in
            SeekRequest(requestID: id, mediaSessionID: media ?? 0, relativeTime: offset, resumeState: resumeState).json
        }
    }

    /// Stream volume (0…1), not the device volume.
    public func setStreamVolume(_ level: Double) async -> CastRequest<MediaStatus?> {
        let level = min(max(level.isNaN ? 0 : level, 0), 1)
        return await command("SET_VOLUME") { id, media, _ in
            MediaMessage.setVolume(requestID: id, mediaSessionID: media ?? 0, volume: Volume(level: level)).json
        }
    }

    public func setStreamMuted(_ muted: Bool) async -> CastRequest<MediaStatus?> {
        await command("SET_VOLUME") { id, media, _ in
            MediaMessage.setVolume(requestID: id, mediaSessionID: media ?? 0, volume: Volume(muted: muted)).json
        }
    }

    public func setPlaybackRate(_ rate: Double) async -> CastRequest<MediaStatus?> {
        await command("SET_PLAYBACK_RATE") { id, media, _ in
            MediaMessage.setPlaybackRate(requestID: id, mediaSessionID: media ?? 0, playbackRate: rate).json
        }
    }

    /// Selects the active tracks (subtitles, audio); `[]` turns every optional track off.
    public func setActiveTrackIDs(_ ids: [Int]) async -> CastRequest<MediaStatus?> {
        await command("EDIT_TRACKS_INFO") { id, media, _ in
            MediaMessage.editTracksInfo(requestID: id, mediaSessionID: media ?? 0, activeTrackIDs: ids).json
        }
    }

    /// MEDIA GET_STATUS.
    public func requestStatus() async -> CastRequest<MediaStatus?> {
        await command("GET_STATUS", needsMediaSession: false) { id, media, _ in
            MediaMessage.getStatus(requestID: id, mediaSessionID: media).json
        }
    }

    // MARK: Queue

    public func queueLoad(_ items: [QueueItem], startIndex: Int = 0, repeatMode: RepeatMode? = nil,
                          startTime: Double? = nil) async -> CastRequest<MediaStatus?> {
        await command("QUEUE_LOAD", needsMediaSession: false, supersedes: true) { id, _, _ in
            QueueLoadRequest(requestID: id, items: items, startIndex: startIndex, currentTime: startTime, repeatMode: repeatMode).json
        }
    }

    /// Inserts `items` before the item with id `beforeItemID` (nil = at the end).
    public func queueInsert(_ items: [QueueItem], beforeItemID: Int? = nil) async -> CastRequest<MediaStatus?> {
        await command("QUEUE_INSERT") { id, media, _ in
            QueueInsertRequest(requestID: id, mediaSessionID: media ?? 0, items: items, insertBefore: beforeItemID).json
        }
    }

    public func queueNext() async -> CastRequest<MediaStatus?> { await queueJump(1) }
    public func queuePrevious() async -> CastRequest<MediaStatus?> { await queueJump(-1) }

    private func queueJump(_ jump: Int) async -> CastRequest<MediaStatus?> {
        await command("QUEUE_UPDATE") { id, media, _ in
            QueueUpdateRequest(requestID: id, mediaSessionID: media ?? 0, jump: jump).json
        }
    }

    /// Plays the item with `itemID` now.
    public func queueJump(toItemID itemID: Int) async -> CastRequest<MediaStatus?> {
        await command("QUEUE_UPDATE") { id, media, _ in
            QueueUpdateRequest(requestID: id, mediaSessionID: media ?? 0, currentItemID: itemID).json
        }
    }

    public func queueRemove(itemIDs: [Int]) async -> CastRequest<MediaStatus?> {
        await command("QUEUE_REMOVE") { id, media, _ in
            QueueRemoveRequest(requestID: id, mediaSessionID: media ?? 0, itemIDs: itemIDs).json
        }
    }

    /// Moves `itemIDs` (in this order) before `beforeItemID` (nil = to the end).
    public func queueReorder(itemIDs: [Int], beforeItemID: Int? = nil) async -> CastRequest<MediaStatus?> {
        await command("QUEUE_REORDER") { id, media, _ in
            QueueReorderRequest(requestID: id, mediaSessionID: media ?? 0, itemIDs: itemIDs, insertBefore: beforeItemID).json
        }
    }

    public func queueSetRepeatMode(_ mode: RepeatMode) async -> CastRequest<MediaStatus?> {
        await command("QUEUE_UPDATE") { id, media, _ in
            QueueUpdateRequest(requestID: id, mediaSessionID: media ?? 0, repeatMode: mode).json
        }
    }

    // MARK: - Plumbing

    /// Builds and sends one media request: `build(requestId, mediaSessionId, appSessionId)`.
    private func command(_ type: String, needsMediaSession: Bool = true, timeout: Double? = nil, supersedes: Bool = false,
                         build: @escaping @Sendable (RequestID, Int?, String?) -> JSONValue) async -> CastRequest<MediaStatus?> {
        let (session, mediaSessionID) = state.withLock { ($0.session, $0.status?.mediaSessionID) }
        guard let session else { return .failed(type: type, .disconnected("the session is gone")) }
        if needsMediaSession, mediaSessionID == nil {
            log.warning("\(type) refused: no media session", ["type": .string(type)])
            return .failed(type: type, .invalidPlayerState)
        }
        return await session.appRequest(namespace: .media, type: type, timeout: timeout, supersedes: supersedes,
                                         build: { id, appSessionID in build(id, mediaSessionID, appSessionID) },
                                         map: Self.mediaStatusReply)
    }

    /// The first entry of a MEDIA_STATUS reply (nil when it has none), or the unexpected reply as an error.
    @Sendable static func mediaStatusReply(_ payload: CastPayload) -> Result<MediaStatus?, CastRequestError> {
        if case .media(.mediaStatus(_, let statuses)) = payload { return .success(statuses.first) }
        return .failure(.deviceError(nil, ErrorReason(rawValue: "unexpected reply \(payload.typeName ?? "?")")))
    }

    /// A MEDIA_STATUS from the app: keeps the first entry (or none) and tells listeners.
    func apply(_ statuses: [MediaStatus]) {
        let status = statuses.first
        let now = MonotonicClock.seconds()
        let (changed, screen) = state.withLock { state -> (Bool, OnScreen?) in
            defer {
                state.status = status
                state.receivedAt = now
            }
            let screen = OnScreen(status, previous: state.onScreen)
            guard screen != state.onScreen else { return (state.status != status, nil) }
            state.onScreen = screen
            return (state.status != status, screen)
        }
        if let screen {
            var fields: LogFields = ["display": "media", "playback": .string(screen.playback)]
            if let content = screen.content { fields["content"] = .string(content) }
            log.info("on screen: " + (screen.content.map { "\($0) (\(screen.playback))" } ?? "no media"), fields)
        }
        guard changed else { return }
        if let status {
            var fields: LogFields = [
                "mediaSessionId": .int(status.mediaSessionID), "playerState": .string(status.playerState.rawValue),
                "currentTime": .double(status.currentTime),
            ]
            if let video = status.videoInfo {
                fields["videoWidth"] = .int(video.width)
                fields["videoHeight"] = .int(video.height)
                fields["hdrType"] = .string(video.hdrType?.rawValue ?? "unknown")
            }
            log.debug("media status: \(status.playerState.rawValue) at \(Int(status.currentTime * 1000)) ms", fields)
        } else {
            log.debug("media status: no media session")
        }
        fanout.emit(status)
        for listener in listeners.current { listener.remoteMediaClient(self, didUpdate: status) }
    }

    /// The session ended: no media session any more, and no more updates.
    func sessionEnded() {
        apply([])
        fanout.finish()
    }
}
