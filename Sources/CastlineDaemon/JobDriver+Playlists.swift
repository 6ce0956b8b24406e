import CastlineJobs
import CastCore
import CastLogging
import CastlineLocalMedia
import CastSender
import CastlineConfig

/// A playlist job's queue on one device.
struct PlaylistQueue: Sendable {
    var urls: [String]
    var window: QueueWindow
    /// The device's item ids, in queue order (from the last status that listed the items).
    var itemIDs: [Int]
    /// An insert or removal is under way: the next advance waits for it.
    var extending = false
}

/// Playlists: a list, a folder or an M3U file, loaded as a queue (a window of it when long),
/// local files served by one server per address that faces the devices.
extension JobDriver {
    func castPlaylist(_ id: String, device: CastDevice, generation: Int) async {
        func report(_ input: JobStateMachine.Input) {
            if castGenerations[id] == generation { feed(id, input) }
        }
        let media = active.media
        let sources: [String]
        if let items = media.items {
            sources = items
        } else {
            do {
                // A local folder or M3U file is read only where the job may serve from.
                let readable = media.url.hasPrefix("/") ? try mediaPolicy.resolve(media.url).path : media.url
                sources = try await Playlist.items(readable, extensions: media.extensions.map(Set.init), group: group)
            } catch {
                log.error("cannot read the playlist \(media.url): \(error)", ["device": .string(id)])
                report(.castFailed("\(error)"))
                return
            }
        }
        let urls: [String]
        do { urls = try await servedURLs(sources, facing: device) } catch {
            log.error("cannot serve the playlist's files to \(device.friendlyName): \(error)", ["device": .string(id)])
            report(.castFailed("\(error)"))
            return
        }
        playlistURLs.formUnion(urls)
        let choice = media.repeatMode ?? .all
        // Handed back after an announcement: the item and position it was at.
        let resume = resumePoints.removeValue(forKey: id)
        let start = resume?.item.map { min(max($0, 0), urls.count - 1) } ?? 0
        let window = QueueWindow(count: urls.count, wraps: choice == .all || choice == .shuffle, start: start)
        let repeatMode: RepeatMode = switch choice {
        case .off: .off
        case .all: window.fits ? .all : .off
        case .single: .single
        case .shuffle: window.fits ? .allAndShuffle : .off
        }
        let link: CastSession
        do throws(ControlError) {
            (_, link) = try await registry.link(id)
            _ = try await ControlPlane.launch(appID, on: link, device: device, timeout: launchBound(on: device, pageApp: false))
        } catch {
            log.warning("cannot cast the playlist to \(device.friendlyName): \(error.message)", ["device": .string(id), "error": .string(error.code)])
            report(Self.launchFailure(error))
            return
        }
        guard castGenerations[id] == generation else { return }
        if let app = await link.application { castRuns(in: app.sessionID, on: id) }
        await registry.claim(id, owner: job.name, contentID: urls[start], detail: scheduleDetail)
        let updates = link.remoteMediaClient.statusUpdates()
        let items = window.loaded.map { queueItem(urls[$0]) }
        log.info("casting a playlist of \(urls.count) item(s) to \(device.friendlyName)" + (window.fits ? "" : ", \(window.size) at a time"), [
            "device": .string(id), "items": .int(Int64(urls.count)), "repeat": .string(choice.rawValue),
        ])
        switch await link.remoteMediaClient.queueLoad(items, startIndex: window.position(of: start), repeatMode: repeatMode,
                                                      startTime: resume?.time).result {
        case .failure(let error):
            log.warning("\(device.friendlyName): QUEUE_LOAD failed: \(error)", ["device": .string(id)])
            await registry.release(id, owner: job.name)
            report(.castFailed("\(error)"))
            return
        case .success(let status):
            playlists[id] = PlaylistQueue(urls: urls, window: window, itemIDs: status?.items?.compactMap(\.itemID) ?? [])
        }
        let started = link.remoteMediaClient.mediaStatus?.effectivePlayerState == .playing
            ? true : await updates.first(within: 30, where: { $0?.effectivePlayerState == .playing }) != nil
        if started { report(.castSucceeded) } else { report(.castFailed("the playlist did not start playing within 30 s")) }
    }

    /// What the device is told about one item.
    func queueItem(_ url: String) -> QueueItem {
        var entry = active.media
        entry.url = url
        entry.contentType = ContentTypeGuess.forPath(url) ?? active.media.contentType
        entry.title = nil
        return QueueItem(media: JobMedia.information(entry, url: url), autoplay: true)
    }

    /// The URLs the device fetches: http(s) items as they are, local files published for the
    /// device alone (each under its position and name, each allowed, readable and media).
    func servedURLs(_ sources: [String], facing device: CastDevice) async throws(ControlError) -> [String] {
        var resolved = sources
        var roots: [String: String] = [:]
        for (index, source) in sources.enumerated() where source.hasPrefix("/") {
            let file = try servedFile(source, contentType: nil)
            resolved[index] = file.path
            if let root = file.root { roots[file.path] = root }
        }
        let published = Playlist.Published(resolved, roots: roots)
        guard !published.files.isEmpty else { return sources }
        guard let media else { throw ControlError(.internal, "no_media_server", "this hub serves no local files") }
        let publication = try await ControlError.localMedia { () async throws(LocalMediaError) in try await media.publish(published.files, to: device, owner: job.name) }
        publications[device.id] = publication
        return published.urls(at: publication)
    }

    /// Keeps a long playlist's window moving as the device plays it.
    func advancePlaylist(_ id: String, _ status: MediaStatus) {
        guard var queue = playlists[id] else { return }
        if let items = status.items, !items.isEmpty { queue.itemIDs = items.compactMap(\.itemID) }
        playlists[id] = queue
        guard !queue.extending, let current = status.currentItemID, let position = queue.itemIDs.firstIndex(of: current) else { return }
        let step = queue.window.advance(playing: position)
        guard !step.append.isEmpty || step.removeFront > 0 else { return }
        queue.extending = true
        playlists[id] = queue
        let items = step.append.map { queueItem(queue.urls[$0]) }
        let removed = Array(queue.itemIDs.prefix(step.removeFront))
        Task {
            guard let link = await registry.entry(id)?.link else { return }
            // Played items go first, so the device never holds more than the window.
            var outcome = "extended by \(items.count), \(removed.count) played removed"
            if !removed.isEmpty, case .failure(let error) = await link.remoteMediaClient.queueRemove(itemIDs: removed).result {
                outcome = "QUEUE_REMOVE failed: \(error)"
            }
            if !items.isEmpty, case .failure(let error) = await link.remoteMediaClient.queueInsert(items).result {
                outcome += "; QUEUE_INSERT failed: \(error)"
            }
            self.finishedExtending(id, outcome)
        }
    }

    func finishedExtending(_ id: String, _ outcome: String) {
        playlists[id]?.extending = false
        log.info("\(devices[id]?.friendlyName ?? id): playlist window \(outcome)", ["device": .string(id)])
    }
}
