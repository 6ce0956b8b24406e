import CastCore
import CastProtocol
import CastlineDaemon
import Glibc

/// `status --follow` and `cast --follow` (and a local file's cast, which lasts while the file
/// plays): the device's state now, then each change, whichever target serves the command.
/// In a terminal (`view`) a live view redrawn every second and on every change; otherwise one
/// line (or one JSON object) per change.
struct DeviceFollower {
    let target: any ControlTarget
    let device: String
    let json: Bool
    /// The terminal view, redrawn in place.
    let view: Bool

    enum Ending { case duration, signal, ended, mediaEnded }

    private enum Tick { case changed, timer, signal, sourceEnded }

    /// Follows until `seconds` pass (nil: no limit), SIGINT/SIGTERM, the change source ends, or,
    /// with `untilIdle`, the media ends. `printing`: false only watches (a file being served).
    func follow(for seconds: Double? = nil, untilIdle: Bool = false, printing: Bool = true) async throws -> Ending {
        SignalWaiter.block([SIGINT, SIGTERM])
        var last = try await target.showOrExit(device)
        var receivedAt = MonotonicClock.seconds()
        var drawn = 0
        if printing { drawn = draw(last, receivedAt: receivedAt, now: receivedAt, previous: 0) }
        if untilIdle, Self.ended(last) { return .mediaEnded }
        let (ticks, tick) = AsyncStream<Tick>.makeStream()
        let changes = target.changes(of: device)
        let tasks = [
            Task {
                for await _ in changes { tick.yield(.changed) }
                tick.yield(.sourceEnded)
            },
            Task {
                _ = await SignalWaiter.wait([SIGINT, SIGTERM])
                tick.yield(.signal)
            },
            Task {
                // The live view's clock moves every second; the deadline is checked on each tick.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    tick.yield(.timer)
                }
            },
        ]
        defer { for task in tasks { task.cancel() } }
        let deadline = seconds.map { MonotonicClock.seconds() + $0 }
        for await event in ticks {
            let now = MonotonicClock.seconds()
            switch event {
            case .signal: return .signal
            case .sourceEnded: return .ended
            case .changed:
                guard case .success(let current) = await target.show(device) else { return .ended }
                if current != last {
                    last = current
                    receivedAt = now
                    if printing { drawn = draw(current, receivedAt: receivedAt, now: now, previous: drawn) }
                }
                if untilIdle, Self.ended(current) { return .mediaEnded }
            case .timer:
                if printing, view { drawn = draw(last, receivedAt: receivedAt, now: now, previous: drawn) }
            }
            if let deadline, now >= deadline { return .duration }
        }
        return .ended
    }

    /// Prints the device: the terminal view over the `previous` lines drawn, or one line / one
    /// JSON object. The number of lines the view now takes.
    private func draw(_ device: JSONValue, receivedAt: Double, now: Double, previous: Int) -> Int {
        guard view, let snapshot = StatusSnapshot(json: device, receivedAt: receivedAt) else {
            CommandOutput.print(device, json: json)
            return 0
        }
        let lines = StatusView.render(snapshot, now: now, width: StatusView.terminalWidth())
        var text = previous > 0 ? "\u{1B}[\(previous)A" : ""
        for line in lines { text += "\u{1B}[2K" + TerminalText.safe(line) + "\n" }
        if lines.count < previous { text += "\u{1B}[J" }
        _ = text.withCString { write(1, $0, strlen($0)) }
        return lines.count
    }

    /// The media is over: IDLE with a reason, or no app at all.
    static func ended(_ device: JSONValue) -> Bool {
        device["state"]?.string == "NO_APP" || (device["state"]?.string == "IDLE" && device["idleReason"] != nil)
    }
}
