import CastCore
import CastProtocol
import CastlineDaemon
import Glibc

/// `status --follow` and `cast --follow` through the daemon: the device's state now, then one
/// line (or JSON object) per change, from the daemon's event stream.
enum DaemonFollow {
    /// Prints the device's state and every change until `seconds` pass (nil: until a signal),
    /// or, with `untilIdle`, until its media ends.
    static func follow(_ daemon: DaemonClient, device: String, json: Bool, for seconds: Double? = nil, untilIdle: Bool = false) throws {
        let path = DaemonClient.path(device)
        var last = try daemon.send("GET", path)
        let id = last["id"]?.string ?? device
        daemon.print(last, json: json)
        if untilIdle, ended(last) { return }
        do {
            try daemon.client.stream("/v1/events?kinds=media,device,session", for: seconds) { line in
                // Only this device's events; each one re-reads the device, printed when it changed.
                guard line.hasPrefix("data: "), let event = try? JSONValue.parse(String(line.dropFirst(6))),
                      event["device"]?.string == id, let now = try? daemon.send("GET", path) else { return true }
                if now != last {
                    daemon.print(now, json: json)
                    last = now
                }
                return !(untilIdle && ended(now))
            }
        } catch {
            printError("castline: the daemon's event stream ended: \(error)")
            throw CastlineExit.failure
        }
    }

    static func untilIdle(_ daemon: DaemonClient, device: String, json: Bool) async throws {
        try follow(daemon, device: device, json: json, untilIdle: true)
    }

    /// The media is over: IDLE with a reason, or no app at all.
    static func ended(_ device: JSONValue) -> Bool {
        device["state"]?.string == "NO_APP" || (device["state"]?.string == "IDLE" && device["idleReason"] != nil)
    }
}
