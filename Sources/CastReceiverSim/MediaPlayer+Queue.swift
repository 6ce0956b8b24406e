import CastCore
import CastLogging

/// Queue commands. Items get receiver-assigned `itemId`s; a command is checked completely
/// before anything changes, so a rejected command leaves the queue as it was.
extension MediaPlayer {
    mutating func queueLoad(_ request: QueueLoadRequest, now: Double) -> [EndpointReply] {
        guard !request.items.isEmpty else { return invalidParams(request.requestID, "QUEUE_LOAD without items") }
        guard request.items.allSatisfy({ $0.media != nil }) else { return invalidParams(request.requestID, "queue item without media") }
        let start = request.startIndex ?? 0
        guard request.items.indices.contains(start) else { return invalidParams(request.requestID, "startIndex \(start) outside the queue") }
        return begin(items: request.items, startIndex: start, isQueue: true, repeatMode: request.repeatMode ?? .off,
                     position: request.currentTime, playbackRate: nil, activeTrackIDs: nil,
                     requestID: request.requestID, now: now)
    }

    mutating func queueInsert(_ request: QueueInsertRequest, now: Double) -> [EndpointReply] {
        if let error = check(requestID: request.requestID, mediaSessionID: request.mediaSessionID) { return error }
        var current = session!
        guard !request.items.isEmpty, request.items.allSatisfy({ $0.media != nil }) else {
            return invalidParams(request.requestID, "QUEUE_INSERT needs items with media")
        }
        var position = current.items.count
        if let before = request.insertBefore {
            guard let index = current.index(ofItem: before) else {
                return invalidParams(request.requestID, "insertBefore \(before) not in the queue")
            }
            position = index
        }
        if let index = request.currentItemIndex, !request.items.indices.contains(index) {
            return invalidParams(request.requestID, "currentItemIndex \(index) outside the inserted items")
        }
        var inserted = request.items
        for index in inserted.indices {
            inserted[index].itemID = nextItemID
            nextItemID += 1
        }
        current.settle(at: now)
        current.items.insert(contentsOf: inserted, at: position)
        if position <= current.currentIndex { current.currentIndex += inserted.count }
        current.isQueue = true
        session = current
        log.info("inserted \(inserted.count) queue item(s)", logFields.merging(["items": .int(current.items.count)]))
        if let index = request.currentItemIndex {
            startItem(position + index, at: now, position: request.currentTime)
        }
        return statusToAll(requestID: request.requestID, now: now)
    }

    mutating func queueUpdate(_ request: QueueUpdateRequest, now: Double) -> [EndpointReply] {
        if let error = check(requestID: request.requestID, mediaSessionID: request.mediaSessionID) { return error }
        var current = session!
        if let repeatMode = request.repeatMode { current.repeatMode = repeatMode }
        var target: Int?
        if let itemID = request.currentItemID {
            guard let index = current.index(ofItem: itemID) else {
                return invalidParams(request.requestID, "currentItemId \(itemID) not in the queue")
            }
            target = index
        } else if let jump = request.jump, jump != 0 {
            guard let index = current.index(jumping: jump) else { return endOfQueue(request.requestID, jump: jump) }
            target = index
        }
        if let updates = request.items {
            for update in updates {
                guard let itemID = update.itemID, let index = current.index(ofItem: itemID) else { continue }
                var item = update
                if item.media == nil { item.media = current.items[index].media }
                current.items[index] = item
            }
        }
        current.settle(at: now)
        if request.shuffle == true {
            let currentID = current.currentItem.itemID
            let targetID = target.flatMap { current.items[$0].itemID }
            shuffle(&current.items)
            current.currentIndex = current.items.firstIndex { $0.itemID == currentID } ?? 0
            if let targetID { target = current.index(ofItem: targetID) }
        }
        session = current
        if let target {
            startItem(target, at: now, position: request.currentTime)
            log.info("queue jumps to item \(session!.currentItem.itemID ?? 0)", logFields)
        } else if let time = request.currentTime {
            // A seek within the item: the playhead jumps and, while playing, restarts.
            session!.settle(at: now)
            session!.position = session!.clampedPosition(time)
            session!.seeks += 1
            startMovingIfPlaying(at: now)
        }
        return statusToAll(requestID: request.requestID, now: now)
    }

    /// QUEUE_NEXT / QUEUE_PREV (QUEUE_UPDATE `jump` ±1).
    mutating func jump(_ jump: Int, requestID: RequestID, mediaSessionID: Int?, now: Double) -> [EndpointReply] {
        if let error = check(requestID: requestID, mediaSessionID: mediaSessionID) { return error }
        guard let index = session!.index(jumping: jump) else { return endOfQueue(requestID, jump: jump) }
        session!.settle(at: now)
        startItem(index, at: now, position: nil)
        return statusToAll(requestID: requestID, now: now)
    }

    func endOfQueue(_ requestID: RequestID, jump: Int) -> [EndpointReply] {
        log.warning("queue jump \(jump) leaves the queue", logFields.merging(["reason": "END_OF_QUEUE"]))
        return [reply(MediaMessage.invalidRequest(requestID: requestID, reason: .endOfQueue).json)]
    }

    mutating func queueRemove(_ request: QueueRemoveRequest, now: Double) -> [EndpointReply] {
        if let error = check(requestID: request.requestID, mediaSessionID: request.mediaSessionID) { return error }
        guard !request.itemIDs.isEmpty else { return invalidParams(request.requestID, "QUEUE_REMOVE without itemIds") }
        var current = session!
        let removed = Set(request.itemIDs)
        let currentID = current.currentItem.itemID ?? -1
        // The first surviving item after the current one takes over if the current one goes.
        let successor = current.items[(current.currentIndex + 1)...].first { !removed.contains($0.itemID ?? -1) }?.itemID
        current.settle(at: now)
        current.items.removeAll { removed.contains($0.itemID ?? -1) }
        current.isQueue = true
        guard !current.items.isEmpty else {
            session = current.withItems(restoredFrom: session!)
            return end(reason: .cancelled, requestID: request.requestID, now: now)
        }
        var jumpTo: Int?
        if let wanted = request.currentItemID, let index = current.index(ofItem: wanted) {
            jumpTo = index
        } else if let index = current.index(ofItem: currentID) {
            current.currentIndex = index
        } else if let successor, let index = current.index(ofItem: successor) {
            jumpTo = index
        } else if current.repeatMode == .all || current.repeatMode == .allAndShuffle {
            jumpTo = 0
        } else {
            session = current.withItems(restoredFrom: session!)
            return end(reason: .finished, requestID: request.requestID, now: now)
        }
        if jumpTo != nil { current.currentIndex = 0 }
        session = current
        if let jumpTo { startItem(jumpTo, at: now, position: request.currentTime) }
        log.info("removed queue item(s)", logFields.merging(["items": .int(session!.items.count)]))
        return statusToAll(requestID: request.requestID, now: now)
    }

    mutating func queueReorder(_ request: QueueReorderRequest, now: Double) -> [EndpointReply] {
        if let error = check(requestID: request.requestID, mediaSessionID: request.mediaSessionID) { return error }
        var current = session!
        let moving = request.itemIDs
        guard !moving.isEmpty, Set(moving).count == moving.count else {
            return invalidParams(request.requestID, "QUEUE_REORDER needs distinct itemIds")
        }
        guard moving.allSatisfy({ current.index(ofItem: $0) != nil }) else {
            return invalidParams(request.requestID, "QUEUE_REORDER names an unknown item")
        }
        if let before = request.insertBefore, current.index(ofItem: before) == nil || moving.contains(before) {
            return invalidParams(request.requestID, "insertBefore \(before) is unknown or moving")
        }
        let currentID = current.currentItem.itemID
        let moved = moving.map { id in current.items[current.index(ofItem: id)!] }
        current.items.removeAll { moving.contains($0.itemID ?? -1) }
        let position = request.insertBefore.flatMap { current.index(ofItem: $0) } ?? current.items.count
        current.items.insert(contentsOf: moved, at: position)
        current.currentIndex = current.items.firstIndex { $0.itemID == currentID } ?? 0
        current.isQueue = true
        session = current
        if let wanted = request.currentItemID, let index = current.index(ofItem: wanted), index != current.currentIndex {
            session!.settle(at: now)
            startItem(index, at: now, position: request.currentTime)
        }
        log.info("reordered the queue", logFields)
        return statusToAll(requestID: request.requestID, now: now)
    }

    /// Deterministic Fisher–Yates with the device's generator.
    mutating func shuffle(_ items: inout [QueueItem]) {
        guard items.count > 1 else { return }
        for index in stride(from: items.count - 1, to: 0, by: -1) {
            items.swapAt(index, random.below(index + 1))
        }
    }
}

extension MediaSession {
    /// `self` with the current item of `other` still in place, so the final IDLE status can name
    /// it after the queue was emptied.
    func withItems(restoredFrom other: MediaSession) -> MediaSession {
        var copy = self
        copy.items = [other.currentItem]
        copy.currentIndex = 0
        return copy
    }
}
