import CastCore
import CastlineSync
import CastProtocol
import CastSender

/// A device of a video wall through the hub's warm session to it (``DeviceRegistry/link(_:timeout:)``):
/// what ``VideoWall`` calls, carried out on the link the rest of the hub uses, so the wall's
/// commands take the same path as every other.
struct LinkWallMember: WallMember {
    let id: String
    let name: String
    let model: String
    let registry: DeviceRegistry
    let appID: String

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
        do { (device, link) = try await linked(timeout: 10) } catch { throw WallError(error.message) }
        do { _ = try await ControlPlane.launch(appID, on: link, device: device) } catch { throw WallError(error.message) }
        await registry.claim(id, owner: CommandOwner.name, contentID: item.url)
        let fallback = String(item.url.split(separator: "/").last ?? Substring(item.url))
        let media = (try? MediaInformationBuilder(contentURL: item.url).contentType(item.contentType)
            .generic(title: item.title ?? fallback, subtitle: nil).build())
            ?? MediaInformation(contentID: item.url, contentURL: item.url, contentType: item.contentType)
        switch await link.remoteMediaClient.loadAndWait(media, options: MediaLoadOptions(autoplay: false, startTime: position),
                                                        until: .paused, timeout: timeout) {
        case .success: return
        case .failure(let error): throw WallError("\(name): \(error)")
        }
    }

    func status() async -> WallReading {
        guard let link = try? await registry.link(id, timeout: 0.5).1 else { return .unreachable }
        switch await link.remoteMediaClient.requestStatus().result {
        case .success(let status?): return .status(status)
        case .success(nil): return .noMedia
        case .failure(.timedOut), .failure(.disconnected), .failure(.cancelled): return .unreachable
        case .failure: return .noMedia
        }
    }

    func play() async -> Bool { await send { await $0.play() } }
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
        guard let link = try? await registry.link(id, timeout: 0.5).1 else { return false }
        if case .success = await request(link.remoteMediaClient).result { return true }
        return false
    }
}
