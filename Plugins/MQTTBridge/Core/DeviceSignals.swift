import CastJSON

/// What the bridge tells Home Assistant about a TV besides its state: its availability (from the
/// `link` of its state object) and its device triggers (from hub events and command results).
/// Pure: JSON in, payloads out.
package enum DeviceSignals {
    /// What the TV's availability topic says, from its state object.
    package enum Availability: Equatable {
        case online
        case offline
        /// Still `online`: the link is down, but for less than the bound; look again in this
        /// many seconds.
        case onlineFor(Double)

        /// The topic's payload.
        package var payload: String { self == .offline ? "offline" : "online" }
    }

    /// `online` while castline's session with the TV is connected, and for `unavailableAfter`
    /// seconds after it was lost (the state already says UNKNOWN); `offline` after that, and for a
    /// TV never reached. Nil: the object says nothing about the link.
    package static func availability(state: JSONValue, unavailableAfter: Double) -> Availability? {
        guard let link = state["link"]?.string else { return nil }
        if link == "connected" { return .online }
        guard let downFor = state["unreachableFor"]?.double else { return .offline }
        return downFor >= unavailableAfter ? .offline : .onlineFor(unavailableAfter - downFor)
    }

    /// The trigger a hub event fires: `media_finished` for a media status that went IDLE because
    /// the media played to its end.
    package static func trigger(event: JSONValue) -> (device: String, payload: String)? {
        guard event["kind"]?.string == "media", event["type"]?.string == "IDLE", let device = event["device"]?.string,
              event["mediaStatus"]?["idleReason"]?.string == "FINISHED" else { return nil }
        return (device, "media_finished")
    }

    /// The trigger a command's result fires: `command_failed` when it did not succeed.
    package static func trigger(result: JSONValue) -> String? {
        result["ok"]?.bool == false ? "command_failed" : nil
    }
}
