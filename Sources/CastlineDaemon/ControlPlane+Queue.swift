import CastlineJobs
import CastCore
import CastLogging
import CastlineLocalMedia
import CastSender

/// Several items in one cast (`castline cast a.mp4 b.mp4 --repeat all`, a folder, an M3U file).
extension ControlPlane {
    func castQueue(_ entry: DeviceRegistry.Entry, _ link: CastSession, _ arguments: CastArguments) async throws(ControlError) -> JSONValue {
        let device = entry.device
        var sources: [String] = []
        for source in [arguments.media] + arguments.queue {
            // A local folder or M3U file is read only where media.roots allows.
            let readable = source.hasPrefix("/") ? try ControlError.localMedia { () throws(LocalMediaError) in try media.policy.resolve(source) }.path : source
            do { sources += try await Playlist.items(readable, extensions: nil, group: group) } catch {
                throw ControlError.usage("bad_playlist", "\(error)")
            }
        }
        guard sources.count <= QueueWindow.defaultSize else {
            throw ControlError.usage("queue_too_long", "\(sources.count) items: a device's queue takes \(QueueWindow.defaultSize) at a time; "
                                     + "make it a job (media: {url: …}), which moves along the playlist as it plays")
        }
        // Local files: each allowed, readable and media, published for the device alone.
        var roots: [String: String] = [:]
        for (index, source) in sources.enumerated() where source.hasPrefix("/") {
            let local = try ControlError.localMedia { () throws(LocalMediaError) in try media.policy.resolve(source) }
            let file: LocalMediaFile
            do { file = try LocalMediaFile.open(local.path) } catch {
                throw ControlError.usage("unreadable_file", "castline cannot read \(source): \(error)")
            }
            try Self.checkIsMedia(source, head: file.head, format: nil)
            sources[index] = local.path
            if let root = local.root { roots[local.path] = root }
        }
        let published = Playlist.Published(sources, contentType: arguments.contentType, roots: roots)
        let urls = published.urls(at: published.files.isEmpty ? nil : try await serve(files: published.files, to: device))
        let items = urls.enumerated().map { index, url in
            var item = arguments
            item.media = sources[index]
            item.title = index == 0 ? arguments.title : nil
            let type = arguments.contentType ?? ContentTypeGuess.forPath(sources[index]) ?? "application/octet-stream"
            return QueueItem(media: item.mediaInformation(url: url, contentType: type, format: nil), autoplay: !arguments.noAutoplay)
        }
        let appID = arguments.app ?? receiverAppID
        try checkTurn(device)
        let app = try await Self.launch(appID, on: link, device: device)
        if !app.namespaces.isEmpty, !app.namespaces.contains(.media) {
            throw ControlError(.refused, "app_without_media", "\(device.friendlyName): app \(appID) does not play media (it has no \(CastNamespace.media.rawValue) namespace)")
        }
        let repeatMode: RepeatMode = switch arguments.repeatMode {
        case "all": .all
        case "single": .single
        case "shuffle": .allAndShuffle
        default: .off
        }
        try checkTurn(device)
        await registry.claim(device.id, owner: CommandOwner.name, contentID: urls[0])
        let updates = link.remoteMediaClient.statusUpdates()
        try Self.check(await link.remoteMediaClient.queueLoad(items, startIndex: 0, repeatMode: repeatMode, startTime: arguments.start)
            .result.map { _ in () }, "QUEUE_LOAD", device: device)
        let wanted: PlayerState = arguments.noAutoplay ? .paused : .playing
        if link.remoteMediaClient.mediaStatus?.effectivePlayerState != wanted,
           await updates.first(within: arguments.playTimeout, where: { $0?.effectivePlayerState == wanted }) == nil {
            await registry.release(device.id, owner: CommandOwner.name)
            throw ControlError(.unavailable, "load_failed", "\(device.friendlyName): the queue is not \(wanted.rawValue) within \(arguments.playTimeout.formatted) s")
        }
        log.info("\(device.friendlyName): a queue of \(items.count) item(s), repeat \(arguments.repeatMode ?? "off")", [
            "device": .string(device.id), "items": .int(Int64(items.count)),
        ])
        return await result(entry)
    }
}
