import CastCore
import CastProtocol
import CastSender
import CastlineSync
import Synchronization

/// A device of a video wall through the hub's warm session to it (``DeviceRegistry/link(_:timeout:)``):
/// what ``VideoWall`` calls, carried out on the link the rest of the hub uses, so the wall's
/// commands take the same path as every other.
final class LinkWallMember: WallMember {
    let id: String
    let name: String
    let model: String
    let registry: DeviceRegistry
    let appID: String
    /// The link last used: a wall polls each TV several times a second, and the registry's
    /// actor is every device's; asked again after any failure.
    let cached = Mutex<CastSession?>(nil)

    /// The Default Media Receiver's rates (pychromecast PR#660: 0.5–2 seen to work); nudges stay
    /// within ``SyncPolicy/maxNudge`` of 1 anyway.
    var rates: ClosedRange<Double> { 0.5...2 }

    init(device: CastDevice, registry: DeviceRegistry, appID: String) {
        id = device.id
        name = device.friendlyName
        model = device.modelName
        self.registry = registry
        self.appID = appID
    }

    func load(_ item: WallItem, position: Double, timeout: Double) async throws(WallError) {
        let link: CastSession
        let device: CastDevice
        forget()
        do { (device, link) = try await linked(timeout: 10) } catch { throw WallError(error.message) }
        cached.withLock { $0 = link }
        do { _ = try await ControlPlane.launch(appID, on: link, device: device) } catch { throw WallError(error.message) }
        await registry.claim(id, owner: CommandOwner.name, contentID: item.url)
        let fallback = String(item.url.split(separator: "/").last ?? Substring(item.url))
        let media = (try? MediaInformationBuilder(contentURL: item.url).contentType(item.contentType)
            .generic(title: item.title ?? fallback, subtitle: nil).build())
            ?? MediaInformation(contentID: item.url, contentURL: item.url, contentType: item.contentType)
        let client = link.remoteMediaClient
        let updates = client.statusUpdates()
        let loaded: MediaStatus?
        switch await client.load(media, options: MediaLoadOptions(autoplay: false, startTime: position, timeout: timeout)).result {
        case .success(let status): loaded = status
        case .failure(let error): throw WallError("\(name): the LOAD failed: \(error)")
        }
        // PAUSED once buffered; PLAYING from a receiver that ignores `autoplay: false`.
        let session = loaded?.mediaSessionID
        @Sendable func settled(_ status: MediaStatus?) -> Bool {
            guard let status, session == nil || status.mediaSessionID == session else { return false }
            return [.paused, .playing].contains(status.effectivePlayerState) || (status.playerState == .idle && status.idleReason != nil)
        }
        var reached = settled(client.mediaStatus) ? client.mediaStatus : nil
        if reached == nil, case .found(let status) = await updates.firstOutcome(within: timeout, where: settled) { reached = status }
        switch reached?.effectivePlayerState {
        case .paused?:
            return
        case .playing?:
            // Paused now; the wall's PLAY starts it where the others start.
            guard case .success(let status?) = await client.pause().result, status.effectivePlayerState == .paused else {
                throw WallError("\(name): it played at once (autoplay false ignored) and did not pause")
            }
        default:
            throw WallError("\(name): " + (reached.map { "the media went \($0.playerState.rawValue) \($0.idleReason?.rawValue ?? "")" }
                                           ?? "not buffered within \(Int(timeout)) s"))
        }
    }

    func status() async -> (WallReading, RoundTripFilter.Sample?) {
        guard let link = await session() else { return (.unreachable, nil) }
        let request = await link.remoteMediaClient.requestStatus()
        let result = await request.result
        let wire = request.wireTimes.map { RoundTripFilter.Sample(sent: $0.written, received: $0.answered) }
        switch result {
        case .success(let status?): return (.status(status), wire)
        case .success(nil): return (.noMedia, wire)
        case .failure(.timedOut), .failure(.disconnected), .failure(.cancelled):
            forget()
            return (.unreachable, nil)
        case .failure: return (.noMedia, nil)
        }
    }

    func play() async -> Double? {
        guard let link = await session() else { return nil }
        let request = await link.remoteMediaClient.play()
        guard case .success = await request.result else {
            forget()
            return nil
        }
        return request.wireTimes?.written ?? MonotonicClock.seconds()
    }

    func seek(to position: Double) async -> Bool { await send { await $0.seek(to: position, resumeState: .playbackStart) } }
    func setRate(_ rate: Double) async -> Bool { await send { await $0.setPlaybackRate(rate) } }

    func awaitReachable(timeout: Double) async -> Bool {
        let deadline = MonotonicClock.seconds() + max(0, timeout)
        // Bounded: at most one try every half second until the deadline.
        while MonotonicClock.seconds() < deadline {
            if (try? await registry.link(id, timeout: 0.5)) != nil { return true }
            try? await Task.sleep(nanoseconds: 500_000_000)
            if Task.isCancelled { return false }
        }
        return false
    }

    private func linked(timeout: Double) async throws(ControlError) -> (CastDevice, CastSession) {
        let (entry, link) = try await registry.link(id, timeout: timeout)
        return (entry.device, link)
    }

    private func send(_ request: (RemoteMediaClient) async -> CastRequest<MediaStatus?>) async -> Bool {
        guard let link = await session() else { return false }
        if case .success = await request(link.remoteMediaClient).result { return true }
        forget()
        return false
    }

    /// The device's link: the one last used, else the registry's (0.5 s at most).
    private func session() async -> CastSession? {
        if let link = cached.withLock({ $0 }) { return link }
        guard let link = try? await registry.link(id, timeout: 0.5).1 else { return nil }
        cached.withLock { $0 = link }
        return link
    }

    private func forget() { cached.withLock { $0 = nil } }
}
