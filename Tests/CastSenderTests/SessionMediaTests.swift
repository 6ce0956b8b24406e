import Glibc
import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
import CastTestSupport
import CastSender
import CastTransport
import Synchronization
import SystemCrypto
import Testing

/// Media control through the sender framework against the simulator: playback, typed request
/// failures, queue and tracks, 4K HDR VideoInfo, a custom channel.
extension SessionIntegrationTests {
    @Test("load, pause, play, seek (absolute and relative), stream volume, device volume and mute")
    func playbackControl() async throws {
        try await withSenderRig { rig in
            let recorder = EventRecorder()
            let (manager, session) = try await Self.startSession(rig, recorder: recorder)
            let client = session.remoteMediaClient
            let loaded = try await Self.load(session)
            #expect(loaded?.media?.contentID == Self.movie)
            #expect(loaded?.media?.metadata?.title == "Big Buck Bunny")
            let playing = await waitForMediaStatus(client) { $0.playerState == .playing }
            #expect(playing != nil)
            #expect(playing?.supportedMediaCommands.contains(.pause) == true)

            let paused = try await client.pause().value()
            #expect(paused?.playerState == .paused)
            let seeked = try await client.seek(to: 120, resumeState: .playbackStart).value()
            #expect((seeked?.currentTime ?? 0) >= 120)
            #expect(await waitForMediaStatus(client) { $0.playerState == .playing } != nil)
            let relative = try await client.seek(by: -60).value()
            let position = try #require(relative?.currentTime)
            #expect(position >= 60 && position < 120, "relative seek landed at \(position)")

            let faster = try await client.setPlaybackRate(1.5).value()
            #expect(faster?.playbackRate == 1.5)
            let quieter = try await client.setStreamVolume(0.25).value()
            #expect(abs((quieter?.volume?.level ?? 0) - 0.25) < 0.001)
            // A reply's status is applied before its request completes.
            #expect(abs((client.mediaStatus?.volume?.level ?? 0) - 0.25) < 0.001)
            let muted = try await client.setStreamMuted(true).value()
            #expect(muted?.volume?.muted == true)

            let device = try await session.setDeviceVolume(0.4).value()
            #expect(abs((device.volumeLevel ?? 0) - 0.4) < 0.001)
            let deviceMuted = try await session.setDeviceMuted(true).value()
            #expect(deviceMuted.isMuted == true)
            #expect(recorder.deviceStatusList.contains { $0.isMuted == true })

            // Requests go out in call order: twenty seeks queued without waiting end at the last one.
            var seeks: [CastRequest<MediaStatus?>] = []
            for step in 1...20 { seeks.append(await client.seek(to: Double(step * 10))) }
            for seek in seeks { _ = try await seek.value() }
            let last = try #require(try await client.requestStatus().value())
            #expect(last.currentTime >= 200 && last.currentTime < 260, "ended at \(last.currentTime)")

            let stopped = try await client.stop().value()
            #expect(stopped == nil || stopped?.playerState == .idle)
            #expect(recorder.mediaStatuses.contains { $0?.playerState == .playing })
            await manager.endAll(stopCasting: true)
        }
    }

    @Test("commands without a media session fail at once with INVALID_PLAYER_STATE; a LOAD failure names the code")
    func typedFailures() async throws {
        try await withSenderRig { rig in
            let (manager, session) = try await Self.startSession(rig)
            let client = session.remoteMediaClient
            await #expect(throws: CastRequestError.invalidPlayerState) { try await client.pause().value() }

            let broken = MediaInformation(contentID: "https://media.example/broken.mp4", contentType: "video/mp4")
            let failed = await client.load(broken).result
            #expect(failed == .failure(.loadFailed(.mediaSrcNotSupported)))
            if case .failure(let error) = failed { #expect("\(error)".contains("MEDIA_SRC_NOT_SUPPORTED"), "\(error)") }
            try await rig.control(["command": "fail-next-load", "device": 0, "code": 103])
            await #expect(throws: CastRequestError.loadFailed(.mediaNetwork)) { try await Self.load(session) }

            // A second LOAD before the first answers supersedes it.
            try await rig.control(["command": "delay", "device": 0, "seconds": 0.5])
            let media = MediaInformation(contentID: Self.movie, contentType: "video/mp4")
            let first = await client.load(media)
            let second = await client.load(media)
            #expect(await first.result == .failure(.superseded(by: second.id)))
            #expect(try await second.value()?.media?.contentID == Self.movie)

            // A reply later than the timeout: timed out, typed.
            try await rig.control(["command": "delay", "device": 0, "seconds": 1.5])
            let slow = await client.load(media, options: MediaLoadOptions(timeout: 0.3))
            guard case .failure(.timedOut) = await slow.result else { Issue.record("not timed out: \(await slow.result)"); return }
            // Cancel: the awaiting side gets .cancelled at once.
            let cancelled = await client.requestStatus()
            cancelled.cancel()
            #expect(await cancelled.result == .failure(.cancelled))
            try await rig.control(["command": "delay", "device": 0, "seconds": 0])
            await manager.endAll(stopCasting: true)
        }
    }


    @Test("queue: load, next, previous, insert, remove, reorder, repeat mode; tracks: active track ids")
    func queueAndTracks() async throws {
        try await withSenderRig { rig in
            let (manager, session) = try await Self.startSession(rig)
            let client = session.remoteMediaClient
            let items = (1...3).map { QueueItem(media: MediaInformation(contentID: "https://media.example/track\($0).mp3", contentType: "audio/mpeg")) }
            let loaded = try #require(try await client.queueLoad(items, startIndex: 0, repeatMode: .off).value())
            let ids = try #require(loaded.items?.compactMap { (item: QueueItem) in item.itemID })
            #expect(ids.count == 3)
            let next = try await client.queueNext().value()
            #expect(next?.currentItemID == ids[1])
            let previous = try await client.queuePrevious().value()
            #expect(previous?.currentItemID == ids[0])
            let inserted = try await client.queueInsert([QueueItem(media: MediaInformation(contentID: "https://media.example/track4.mp3",
                                                                                            contentType: "audio/mpeg"))]).value()
            #expect(inserted?.items?.count == 4)
            let removed = try await client.queueRemove(itemIDs: [ids[2]]).value()
            #expect(removed?.items?.count == 3)
            let reordered = try await client.queueReorder(itemIDs: [ids[1]], beforeItemID: ids[0]).value()
            #expect(reordered?.items?.first?.itemID == ids[1])
            // Past the end of the queue: the device's INVALID_REQUEST with its reason, typed.
            let last = try #require(reordered?.items?.last?.itemID)
            _ = try await client.queueJump(toItemID: last).value()
            #expect(await client.queueNext().result == .failure(.invalidRequest(.endOfQueue)))
            let repeating = try await client.queueSetRepeatMode(.all).value()
            #expect(repeating?.repeatMode == .all)

            let tracks = [MediaTrack(trackID: 1, type: .text, trackContentID: "https://media.example/en.vtt", trackContentType: "text/vtt",
                                     subtype: .subtitles, language: "en", name: "English"),
                          MediaTrack(trackID: 2, type: .text, trackContentID: "https://media.example/fr.vtt", trackContentType: "text/vtt",
                                     subtype: .subtitles, language: "fr", name: "Français")]
            let media = try MediaInformationBuilder(contentURL: Self.movie).contentType("video/mp4").tracks(tracks).build()
            let withTracks = try await client.load(media, options: MediaLoadOptions(activeTrackIDs: [1])).value()
            #expect(withTracks?.activeTrackIDs == [1])
            #expect(withTracks?.media?.tracks.count == 2)
            let switched = try await client.setActiveTrackIDs([2]).value()
            #expect(switched?.activeTrackIDs == [2])
            await manager.endAll(stopCasting: true)
        }
    }

    @Test("4K HDR media reports VideoInfo 3840×2160 hdr (is4K, isHDR)")
    func videoInfo() async throws {
        try await withSenderRig { rig in
            let (manager, session) = try await Self.startSession(rig)
            let status = try await Self.load(session, "https://media.example/uhd-hdr/sintel.mp4")
            let video = try #require(status?.videoInfo)
            #expect(video.width == 3840 && video.height == 2160 && video.hdrType == .hdr)
            #expect(video.is4K && video.isHDR && video.badge == "4K HDR")
            let plain = try await Self.load(session)
            #expect(plain?.videoInfo == nil)
            await manager.endAll(stopCasting: true)
        }
    }

    @Test("custom channel: text, binary and request/reply round trips on its own namespace only")
    func customChannel() async throws {
        try await withSenderRig { rig in
            let (manager, session) = try await Self.startSession(rig, appID: SenderRig.echoAppID)
            let channel = GenericChannel(namespace: SenderRig.echoNamespace)
            let other = GenericChannel(namespace: "urn:x-cast:com.castline.test.other")
            await session.add(channel)
            await session.add(other)
            let otherMessages = other.messages()
            let messages = channel.messages()
            var iterator = messages.makeAsyncIterator()

            try await channel.send(text: #"{"hello":"world"}"#)
            let echoed = await iterator.next()
            #expect(echoed?.payload == .string(#"{"hello":"world"}"#))
            #expect(echoed?.source == (await session.application?.transportID))
            try await channel.send(binary: [0, 1, 2, 254, 255])
            #expect(await iterator.next()?.payload == .binary([0, 1, 2, 254, 255]))

            let reply = try await channel.request(["type": "PING", "value": 7]).value()
            #expect(reply["type"]?.string == "PING" && reply["value"]?.int == 7 && reply["requestId"]?.int != nil)

            // Nothing reached the other namespace.
            #expect(await otherMessages.first(within: 0.2) == nil)
            await manager.endAll(stopCasting: true)
        }
    }
}
