import CastCore
import CastSender

/// What a device showed before an announcement, and how to bring it back (pure: the hub takes
/// the snapshot from the device's link and carries out ``plan(elapsed:)``).
///
/// Brought back: the same app, the same media (contentId, type, metadata with images, tracks,
/// custom data) at its position, the active tracks, the queue with its current item and repeat
/// mode, paused if it was paused, then the volume and mute. A live stream rejoins at its live
/// edge; media whose duration is unknown resumes at its position plus the announcement's length.
/// What cannot come back is said, with the reason, and the device is left idle.
package struct AnnouncementSnapshot: Sendable, Equatable {
    package var app: ApplicationInfo?
    package var media: MediaStatus?
    /// 0…1 and mute, as the device reported them.
    package var volume: Double?
    package var muted: Bool?

    package init(app: ApplicationInfo?, media: MediaStatus?, volume: Double?, muted: Bool?) {
        self.app = app
        self.media = media
        self.volume = volume
        self.muted = muted
    }

    package enum Restore: Sendable, Equatable {
        /// Nothing played: leave the device idle (its volume is still restored).
        case nothing(String)
        case load(appID: String, media: MediaInformation, options: MediaLoadOptions)
        case queue(appID: String, items: [QueueItem], startIndex: Int, startTime: Double?, repeatMode: RepeatMode?, autoplay: Bool)
        /// It cannot be brought back, and why.
        case impossible(String)
    }

    /// What to do after an announcement that took `elapsed` seconds, and a note that says what
    /// will not be as it was (nil: everything will be).
    package func plan(elapsed: Double) -> (restore: Restore, partly: String?) {
        guard let app, app.isIdleScreen != true else { return (.nothing("nothing was playing"), nil) }
        let name = app.displayName.isEmpty ? app.appID : "\(app.displayName) (\(app.appID))"
        let playsMedia = app.namespaces.isEmpty || app.namespaces.contains(.media)
        guard let status = media, status.playerState != .idle, let current = status.effectiveMedia else {
            if playsMedia { return (.nothing("\(name) ran with no media playing"), nil) }
            return (.impossible("\(name) reports no media status: castline cannot tell what it showed, so it cannot bring it back"), nil)
        }
        guard !current.contentID.isEmpty || current.contentURL?.isEmpty == false else {
            return (.impossible("\(name) does not say what it plays (no contentId): only that app can bring it back"), nil)
        }
        if let custom = current.customData?.object, custom.keys.contains(where: { ["licenseUrl", "licenseURL", "drm", "licenseData"].contains($0) }) {
            return (.impossible("\(name) plays DRM-protected media: reloading it needs that app's own license exchange"), nil)
        }
        let autoplay = status.playerState != .paused
        var position: Double? = status.currentTime
        var partly: String?
        if current.streamType == .live {
            position = nil
            partly = "a live stream rejoins at its live edge: what it played during the announcement is not replayed"
        } else if current.duration == nil || current.duration == 0 {
            position = status.currentTime + (autoplay ? elapsed : 0)
        }
        if let items = status.items, items.count > 1, items.allSatisfy({ $0.media != nil }),
           let index = items.firstIndex(where: { $0.itemID == status.currentItemID }) {
            let fresh = items.map { item in
                QueueItem(media: item.media, autoplay: item.autoplay, startTime: item.startTime, preloadTime: item.preloadTime,
                          playbackDuration: item.playbackDuration, activeTrackIDs: item.activeTrackIDs, customData: item.customData)
            }
            return (.queue(appID: app.appID, items: fresh, startIndex: index, startTime: position, repeatMode: status.repeatMode,
                           autoplay: autoplay), partly)
        }
        let options = MediaLoadOptions(autoplay: autoplay, startTime: position, activeTrackIDs: status.activeTrackIDs,
                                       playbackRate: status.playbackRate == 1 ? nil : status.playbackRate, customData: status.customData)
        return (.load(appID: app.appID, media: current, options: options), partly)
    }
}
