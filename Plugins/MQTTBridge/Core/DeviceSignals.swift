import CastJSON

/// What the bridge tells Home Assistant about a TV besides its state: its availability (from the
/// `link` of its state object) and its device triggers (from hub events and command results).
/// Pure: JSON in, payloads out.
package enum DeviceSignals {
    /// `online` while castline's session with the TV is connected; `offline` otherwise (connecting,
    /// reconnecting after a drop, lost). Nil: the object says nothing about the link.
    package static func availability(state: JSONValue) -> String? {
        guard let link = state["link"]?.string else { return nil }
        return link == "connected" ? "online" : "offline"
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
