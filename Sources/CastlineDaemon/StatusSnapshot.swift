import CastlineJobs
import CastCore
import CastlineLocalMedia
import CastSender

/// What a device shows at one moment: the app, the device volume and the media status, with the
/// playback position estimated between status messages. `castline status`, the API's device
/// objects and the MQTT device state are this object's ``json(at:)``.
package struct StatusSnapshot: Sendable {
    package var deviceName: String
    package var deviceID: String
    package var endpoint: String
    package var app: ApplicationInfo?
    package var deviceVolume: Double?
    package var deviceMuted: Bool?
    package var media: MediaStatus?
    /// Monotonic seconds when `media` arrived (for the position estimate).
    package var receivedAt: Double
    /// Hub fields (`castline run`): the device's model, its connection state and the job or
    /// command that owns it; absent from a direct `castline status`.
    package var model: String?
    package var link: String?
    package var owner: String?
    /// ``ScreenOwner/Kind``: job, command, announcement, other, nobody, unknown.
    package var ownerKind: String?
    /// What of the owner's shows: a schedule's entry in force, or its fallback.
    package var ownerDetail: String?
    /// The web page castline showed there (DashCast, a dashboard), while its app session runs.
    package var page: ShownPage?
    /// The device cannot be seen now (its link is down): its state is UNKNOWN, not the last seen.
    package var isUnknown = false
    /// Monotonic seconds since when it cannot be reached (connected once, lost since).
    package var unreachableSince: Double?
    package var aliases: [String] = []
    /// A speaker group (model `Google Cast Group`), with its members and each one's playback.
    package var isGroup = false
    package var groupMembers: [MultizoneView.Member] = []
    /// The groups whose media this device plays now.
    package var castingGroups: [MultizoneView.Group] = []
    /// The ffmpeg child of a remuxed or transcoded local file (the hub's `transcode` object):
    /// what it does, how much media it has written (s), `running` / `finished` / `failed`.
    package var transcode: (action: String, position: Double, state: String)?
    /// Whether the screen shows the app (nil: the device has no screen, or it is not known here).
    package var screen: ScreenReading?

    package init(deviceName: String, deviceID: String, endpoint: String, app: ApplicationInfo? = nil, deviceVolume: Double? = nil,
                deviceMuted: Bool? = nil, media: MediaStatus? = nil, receivedAt: Double) {
        self.deviceName = deviceName
        self.deviceID = deviceID
        self.endpoint = endpoint
        self.app = app
        self.deviceVolume = deviceVolume
        self.deviceMuted = deviceMuted
        self.media = media
        self.receivedAt = receivedAt
    }

    /// A snapshot from its JSON object (what the API answers), with `receivedAt` as the time it
    /// was read. Nil when the object has no device.
    package init?(json: JSONValue, receivedAt: Double) {
        guard let name = json["device"]?.string, let id = json["id"]?.string else { return nil }
        self.init(deviceName: name, deviceID: id, endpoint: json["endpoint"]?.string ?? "", receivedAt: receivedAt)
        if let appID = json["appId"]?.string {
            app = ApplicationInfo(appID: appID, displayName: json["app"]?.string ?? appID, sessionID: json["sessionId"]?.string ?? "",
                                  transportID: json["sessionId"]?.string ?? "")
        }
        deviceVolume = json["volume"]?.double
        deviceMuted = json["muted"]?.bool
        if let status = json["mediaStatus"], var media = try? MediaStatus(json: status) {
            // The position the daemon estimated when it answered.
            if let position = json["currentTime"]?.double { media.currentTime = position }
            self.media = media
        }
        model = json["model"]?.string
        link = json["link"]?.string
        owner = json["owner"]?.string
        ownerKind = json["ownerKind"]?.string
        ownerDetail = json["ownerDetail"]?.string
        if let url = json["page"]?["url"]?.string { page = ShownPage(url: url, title: json["page"]?["title"]?.string, appSession: "") }
        isUnknown = json["state"]?.string == "UNKNOWN"
        aliases = json["aliases"]?.array?.compactMap(\.string) ?? []
        if let group = json["group"] {
            isGroup = true
            groupMembers = (group["members"]?.array ?? []).compactMap { member in
                guard let id = member["id"]?.string else { return nil }
                return MultizoneView.Member(id: id, name: member["name"]?.string ?? "", playbackState: member["state"]?.string,
                                            channel: member["channel"]?.string)
            }
        }
        castingGroups = (json["playsInGroups"]?.array ?? []).compactMap { group in
            guard let id = group["id"]?.string else { return nil }
            return MultizoneView.Group(id: id, name: group["name"]?.string ?? "")
        }
        if let reading = json["screen"], case .object = reading {
            screen = ScreenReading(visible: reading["visible"]?.bool, reason: reading["reason"]?.string.flatMap(ScreenReading.Reason.init(rawValue:)),
                                   source: reading["source"]?.string.flatMap(ScreenReading.Source.init(rawValue:)))
        }
        if let t = json["transcode"], let action = t["action"]?.string {
            transcode = (action, t["position"]?.double ?? 0, t["state"]?.string ?? "running")
        }
    }

    /// The position now: the reported time plus the time since, at the playback rate, while
    /// playing (capped at the duration).
    package func position(at now: Double) -> Double? {
        guard let media else { return nil }
        var position = media.currentTime
        if media.effectivePlayerState == .playing { position += max(0, now - receivedAt) * (media.playbackRate > 0 ? media.playbackRate : 1) }
        if let duration = media.effectiveMedia?.duration, duration > 0 { position = min(position, duration) }
        return position
    }

    package var state: String {
        if isUnknown { return "UNKNOWN" }
        guard let media else { return app == nil ? "NO_APP" : (page != nil ? "PAGE" : "NO_MEDIA") }
        // (NO_APP: nothing casts, or the app was just stopped.)
        return media.effectivePlayerState.rawValue
    }

    package var title: String? { media?.effectiveMedia?.metadata?.title ?? (media == nil ? page?.title : nil) }
    package var subtitle: String? { media?.effectiveMedia?.metadata?.subtitle ?? media?.effectiveMedia?.metadata?.studio }
    package var badge: String? { media?.videoInfo?.badge }

    /// The JSON object (docs/cli.md, docs/api/openapi.yaml): flat, stable keys plus the raw media
    /// status.
    package func json(at now: Double) -> JSONValue {
        var o = JSONObject()
        o.set("device", .string(deviceName))
        o.set("id", .string(deviceID))
        o.set("endpoint", .string(endpoint))
        if let model { o.set("model", .string(model)) }
        if let link { o.set("link", .string(link)) }
        if let owner { o.set("owner", .string(owner)) }
        if let ownerKind { o.set("ownerKind", .string(ownerKind)) }
        if let ownerDetail { o.set("ownerDetail", .string(ownerDetail)) }
        if let page, media == nil {
            var shown: JSONObject = ["url": .string(page.url)]
            if let title = page.title { shown.set("title", .string(title)) }
            o.set("page", .object(shown))
            if let title = page.title { o.set("title", .string(title)) }
        }
        if let unreachableSince { o.set("unreachableFor", .double(((now - unreachableSince) * 10).rounded() / 10)) }
        if !aliases.isEmpty { o.set("aliases", .array(aliases.map { .string($0) })) }
        o.set("state", .string(state))
        if let screen { o.set("screen", screen.json) }
        if isGroup {
            o.set("group", ["members": .array(groupMembers.map { member in
                var entry: JSONObject = ["id": .string(member.id), "name": .string(member.name),
                                         "state": .string(member.playbackState ?? "UNKNOWN")]
                if let channel = member.channel { entry.set("channel", .string(channel)) }
                return .object(entry)
            })])
        }
        if !castingGroups.isEmpty {
            o.set("playsInGroups", .array(castingGroups.map { ["id": .string($0.id), "name": .string($0.name)] }))
        }
        if let app {
            o.set("app", .string(app.displayName))
            o.set("appId", .string(app.appID))
            o.set("sessionId", .string(app.sessionID))
        }
        if let deviceVolume { o.set("volume", .double((deviceVolume * 1000).rounded() / 1000)) }
        if let deviceMuted { o.set("muted", .bool(deviceMuted)) }
        if let media {
            if let reason = media.idleReason { o.set("idleReason", .string(reason.rawValue)) }
            let info = media.effectiveMedia
            if let title { o.set("title", .string(title)) }
            if let subtitle { o.set("subtitle", .string(subtitle)) }
            if let info {
                o.set("contentId", .string(ServedMediaNames.shared.redact(info.contentID)))
                if !info.contentType.isEmpty { o.set("contentType", .string(info.contentType)) }
                o.set("streamType", .string(info.streamType.rawValue))
                if let duration = info.duration { o.set("duration", .double(duration)) }
            }
            if let position = position(at: now) { o.set("currentTime", .double((position * 1000).rounded() / 1000)) }
            o.set("playbackRate", .double(media.playbackRate))
            if let video = media.videoInfo {
                o.set("video", video.json)
                o.set("badge", .string(video.badge))
            }
            o.set("mediaSessionId", .int(Int64(media.mediaSessionID)))
            o.set("mediaStatus", media.json.redactingServedURLs)
        }
        return .object(o)
    }
}

/// A web page castline showed on a device, in the app session it runs in.
package struct ShownPage: Sendable, Equatable {
    package var url: String
    package var title: String?
    package var appSession: String

    package init(url: String, title: String?, appSession: String) {
        self.url = url
        self.title = title
        self.appSession = appSession
    }
}
