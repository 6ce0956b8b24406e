import CastCore
import CastLogging

/// Where a job's content was when a command interrupted it (an announcement): the playlist item
/// and the position, so the job shows it again from there.
struct ResumePoint: Sendable, Equatable {
    /// The playlist index (of the job's full playlist, not the device's queue window).
    var item: Int?
    /// Seconds into the media (the item's, for a playlist); nil for a page.
    var time: Double?
}

/// An announcement pauses the job it interrupts (the job yields to the command's cast) and hands
/// the device back here: the job casts its own content again through its own state machine, so
/// nothing races its recast. The page for a site, the item and position for a playlist, the
/// position for one media.
extension JobDriver {
    /// Hands `id` back to the job after a command (`why`); `media`: what the device showed before
    /// the command (the resume point). False when the job does not take it (not its device, not
    /// yielding to a command, stopped): the caller restores by itself.
    package func handBack(_ id: String, media: MediaStatus?, why: String) -> Bool {
        guard !stopped, let machine = machines[id], machine.state == .playing || machine.isYielding, machine.heldByGroup == nil else { return false }
        resumePoints[id] = resumePoint(id, media: media)
        feed(id, .handBack(why))
        guard let after = machines[id], after.state == .casting else {
            resumePoints[id] = nil
            return false
        }
        return true
    }

    func resumePoint(_ id: String, media: MediaStatus?) -> ResumePoint? {
        guard site == nil, let media, let content = media.effectiveMedia.map({ $0.contentURL ?? $0.contentID }) else { return nil }
        let time = media.currentTime > 0 ? media.currentTime : nil
        if let queue = playlists[id] {
            guard let index = queue.urls.firstIndex(of: content) else { return nil }
            return ResumePoint(item: index, time: time)
        }
        guard urls.contains(content) else { return nil }
        return ResumePoint(item: nil, time: time)
    }

    /// Waits until the job shows its content on `id` again (true), its cast fails, or `timeout`
    /// seconds pass (false).
    package func waitUntilShown(_ id: String, timeout: Double) async -> Bool {
        if machines[id]?.state == .playing { return true }
        guard machines[id]?.state == .casting else { return false }
        nextShownWaiter += 1
        let key = nextShownWaiter
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            await self?.resolveShownWaiter(id, key, false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { shownWaiters[id, default: [:]][key] = $0 }
    }

    private func resolveShownWaiter(_ id: String, _ key: Int, _ shown: Bool) {
        shownWaiters[id]?.removeValue(forKey: key)?.resume(returning: shown)
    }

    /// After each input: waiters hear whether the cast they wait for ended on the screen.
    func settleShownWaiters(_ id: String) {
        guard let state = machines[id]?.state, state != .casting, let waiting = shownWaiters.removeValue(forKey: id) else { return }
        for continuation in waiting.values { continuation.resume(returning: state == .playing) }
    }
}
