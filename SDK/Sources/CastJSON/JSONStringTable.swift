/// Interned strings for the keys and values Cast payloads repeat in every message.
///
/// The parser looks every escape-free string of up to ``maxLength`` bytes up here first: a hit
/// returns the stored (immortal, literal) `String` without validating, copying or allocating.
/// A miss costs one hash and at most a few byte compares. Read-only after initialisation.
@usableFromInline
struct JSONStringTable: @unchecked Sendable {
    @usableFromInline static let shared = JSONStringTable(strings: knownStrings)

    /// Longest string worth looking up.
    @inlinable @inline(__always) static var maxLength: Int { 48 }

    static let knownStrings: [String] = [
        "*", "ALBUM", "ANDROID_TV", "APP_AVAILABLE", "APP_ERROR", "APP_UNAVAILABLE", "AUDIO", "AUDIOBOOK",
        "BAD_PARAMETER", "BUFFERED", "BUFFERING", "Backdrop", "CANCELLED", "CAPTIONS", "CC1AD845", "CHAPTERS",
        "CLOSE", "CONNECT", "CONNECTED", "DESCRIPTIONS", "DUPLICATE_REQUEST_ID", "Default Media Receiver",
        "E8C28D3C", "EDIT_TRACKS_INFO", "END_OF_QUEUE", "ERROR", "FINISHED", "GENERIC_LOAD_ERROR",
        "GET_APP_AVAILABILITY", "GET_STATUS", "IDLE", "IMAGE", "INTERRUPTED", "INVALID_COMMAND",
        "INVALID_MEDIA_SESSION_ID", "INVALID_PARAMS", "INVALID_PLAYER_STATE", "INVALID_REQUEST",
        "INVALID_SESSION_ID", "LANGUAGE_NOT_SUPPORTED", "LAUNCH", "LAUNCH_ERROR", "LIVE", "LIVE_TV", "LOAD",
        "LOADING", "LOAD_CANCELLED", "LOAD_FAILED", "MEDIA_STATUS", "METADATA", "MOVIE", "NONE", "NOT_FOUND",
        "NOT_SUPPORTED", "PAUSE", "PAUSED", "PING", "PLAY", "PLAYBACK_PAUSE", "PLAYBACK_START", "PLAYING",
        "PLAYLIST", "PODCAST_SERIES", "PONG", "QUEUE_INSERT", "QUEUE_LOAD", "QUEUE_REMOVE", "QUEUE_REORDER",
        "QUEUE_UPDATE", "RADIO_STATION", "RECEIVER_STATUS", "REPEAT_ALL", "REPEAT_ALL_AND_SHUFFLE",
        "REPEAT_OFF", "REPEAT_SINGLE", "SEEK", "SET_PLAYBACK_RATE", "SET_VOLUME", "SKIP_LIMIT_REACHED",
        "STOP", "SUBTITLES", "SYSTEM_ERROR", "TEXT", "TV_SERIES", "VIDEO", "VIDEO_PLAYLIST", "WEB",
        "activeTrackIds", "albumArtist", "albumName", "appId", "appParams", "appType",
        "application/x-mpegURL", "applications", "artist", "attenuation", "audio/mpeg", "autoplay",
        "availability", "breakStatus", "browserVersion", "composer", "connType", "connectionType",
        "contentId", "contentType", "contentUrl", "controlType", "creationDateTime", "currentItemId",
        "currentItemIndex", "currentTime", "customData", "detailedErrorCode", "discNumber", "displayName",
        "duration", "dv", "entity", "episode", "extendedStatus", "false", "fixed", "frequency", "gain_db",
        "hdr", "hdrType", "height", "high_shelf", "iconUrl", "idleReason", "images", "insertBefore",
        "isActiveInput", "isIdleScreen", "isStandBy", "itemId", "itemIds", "items", "jump", "language",
        "latitude", "launchedFromCloud", "level", "liveSeekableRange", "loadingItemId", "location",
        "longitude", "low_shelf", "master", "max_peaking_eqs", "media", "mediaCategory", "mediaSessionId",
        "metadata", "metadataType", "muted", "name", "namespaces", "origin", "originalAirDate", "peaking_eqs",
        "platform", "playbackDuration", "playbackRate", "playerState", "preloadTime", "preloadedItemId",
        "protocolVersion", "protocolVersionList", "quality", "queueData", "queueType", "reason", "reasonCode",
        "receiver-0", "relativeTime", "releaseDate", "repeatMode", "requestId", "responseType", "resumeState",
        "sdkType", "sdr", "season", "sender-0", "senderConnected", "senderInfo", "seriesTitle", "sessionId",
        "shuffle", "startIndex", "startTime", "status", "statusText", "stepInterval", "streamType", "studio",
        "subtitle", "subtype", "supportedAppTypes", "supportedMediaCommands", "systemVersion",
        "textTrackStyle", "thumb", "title", "trackContentId", "trackContentType", "trackId", "trackNumber",
        "tracks", "transportId", "true", "type", "universalAppId", "url",
        "urn:x-cast:com.google.cast.broadcast", "urn:x-cast:com.google.cast.cac",
        "urn:x-cast:com.google.cast.debugoverlay", "urn:x-cast:com.google.cast.media",
        "urn:x-cast:com.google.cast.multizone", "urn:x-cast:com.google.cast.receiver",
        "urn:x-cast:com.google.cast.tp.connection", "urn:x-cast:com.google.cast.tp.deviceauth",
        "urn:x-cast:com.google.cast.tp.heartbeat", "userAgent", "userEq", "version", "video/mp4", "videoInfo",
        "volume", "width",
    ]

    @inlinable @inline(__always) static var slotCount: Int { 1024 }

    // Immortal storage (allocated once for `shared`, never freed): plain pointers, so copying the
    // table or looking a string up never retains or releases anything.
    @usableFromInline let slots: UnsafeMutablePointer<Int16>
    @usableFromInline let strings: UnsafeMutablePointer<String>
    @usableFromInline let bytes: UnsafeMutablePointer<UInt8>
    @usableFromInline let offsets: UnsafeMutablePointer<Int32>

    init(strings list: [String]) {
        var allBytes: [UInt8] = []
        var allOffsets: [Int32] = []
        for string in list {
            allOffsets.append(Int32(allBytes.count))
            allBytes.append(contentsOf: string.utf8)
        }
        allOffsets.append(Int32(allBytes.count))
        slots = .allocate(capacity: Self.slotCount)
        slots.initialize(repeating: -1, count: Self.slotCount)
        strings = .allocate(capacity: max(list.count, 1))
        strings.initialize(from: list, count: list.count)
        bytes = .allocate(capacity: max(allBytes.count, 1))
        bytes.initialize(from: allBytes, count: allBytes.count)
        offsets = .allocate(capacity: allOffsets.count)
        offsets.initialize(from: allOffsets, count: allOffsets.count)
        for index in list.indices {
            let begin = Int(allOffsets[index])
            var slot = Self.hash(bytes + begin, Int(allOffsets[index + 1]) - begin)
            while slots[slot] >= 0 { slot = (slot + 1) & (Self.slotCount - 1) }
            slots[slot] = Int16(index)
        }
    }

    @inlinable @inline(__always)
    static func hash(_ start: UnsafePointer<UInt8>, _ length: Int) -> Int {
        guard length > 0 else { return 0 }
        var value = UInt32(truncatingIfNeeded: length) &* 0x9E37_79B1
        value ^= UInt32(start[0]) &* 0x85EB_CA77
        value ^= UInt32(start[length &- 1]) &* 0xC2B2_AE3D
        value ^= UInt32(start[length >> 1]) &* 0x27D4_EB2F
        value ^= UInt32(start[(length &* 3) >> 2]) &* 0x1656_67B1
        return Int(truncatingIfNeeded: (value ^ (value >> 15)) & UInt32(slotCount - 1))
    }

    /// The interned string equal to the bytes, or nil.
    @inlinable @inline(__always)
    func lookup(_ start: UnsafePointer<UInt8>, _ length: Int) -> String? {
        guard length <= Self.maxLength else { return nil }
        var slot = Self.hash(start, length)
        while true {
            let index = Int(slots[slot])
            if index < 0 { return nil }
            let begin = Int(offsets[index])
            if Int(offsets[index &+ 1]) &- begin == length, memcmpBytes(bytes + begin, start, length) {
                return strings[index]
            }
            slot = (slot &+ 1) & (Self.slotCount - 1)
        }
    }
}

extension String {
    /// The interned copy of a string Cast messages repeat (namespaces, `receiver-0`, `*`, the
    /// message types…) when `bytes` are one: no validation, no allocation. Nil otherwise.
    package static func castInterned(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let base = bytes.baseAddress else { return nil }
        return JSONStringTable.shared.lookup(base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }
}

/// Whether `length` bytes at `lhs` and `rhs` are equal: words, the last one overlapping, so a
/// key of up to 16 bytes takes two compares and no byte loop. Reads only inside both ranges.
@inlinable @inline(__always)
func memcmpBytes(_ lhs: UnsafePointer<UInt8>, _ rhs: UnsafePointer<UInt8>, _ length: Int) -> Bool {
    let l = UnsafeRawPointer(lhs), r = UnsafeRawPointer(rhs)
    if length >= 8 {
        var offset = 0
        while offset &+ 8 < length {
            if l.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != r.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                return false
            }
            offset &+= 8
        }
        return l.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self) == r.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)
    }
    if length >= 4 {
        return l.loadUnaligned(as: UInt32.self) == r.loadUnaligned(as: UInt32.self)
            && l.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self) == r.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self)
    }
    var offset = 0
    while offset < length {
        if lhs[offset] != rhs[offset] { return false }
        offset &+= 1
    }
    return true
}
