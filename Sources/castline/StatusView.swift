import CastCore
import CastlineDaemon
import Glibc

/// Renders a snapshot as the terminal view: a few lines with title, state, a progress bar with
/// elapsed/total, volume and the 4K/HDR badge. Pure; `width` is the terminal width.
enum StatusView {
    static func render(_ s: StatusSnapshot, now: Double, width: Int) -> [String] {
        let width = max(40, min(width, 200))
        var lines: [String] = []
        var head = "\(s.deviceName)"
        if let app = s.app { head += " · \(app.displayName.isEmpty ? app.appID : app.displayName)" }
        if let badge = s.badge { head += "  [\(badge)]" }
        lines.append(clip(head, width))
        let nothing = s.state == "UNKNOWN" ? "(unknown: the device cannot be reached)" : s.page != nil ? "(untitled page)" : "(nothing playing)"
        // Clipped to the width before escaping: what a sender set is shown whole up to the width,
        // each control character as its escape (which may run past the width, never hide text).
        lines.append("  " + TerminalText.safe(clip(s.title ?? (s.media == nil ? nothing : "(untitled)"), width - 2)))
        if let page = s.page, s.media == nil { lines.append("  " + TerminalText.safe(clip(page.url, width - 2))) }
        if let subtitle = s.subtitle { lines.append(clip("  \(subtitle)", width)) }
        let symbol: String
        switch s.state {
        case "PLAYING": symbol = "▶"
        case "PAUSED": symbol = "⏸"
        case "BUFFERING", "LOADING": symbol = "…"
        default: symbol = "■"
        }
        var stateText = "  \(symbol) \(s.state)"
        if let reason = s.media?.idleReason { stateText += " (\(reason.rawValue))" }
        lines.append(stateText)
        let position = s.position(at: now) ?? 0
        let duration = s.media?.effectiveMedia?.duration
        let times = "\(clock(position)) / \(duration.map(clock) ?? (s.media?.effectiveMedia?.streamType == .live ? "LIVE" : "--:--"))"
        let barWidth = max(10, width - times.count - 6)
        var filled = 0
        if let duration, duration > 0 { filled = Int((position / duration * Double(barWidth)).rounded(.down)) }
        filled = min(max(filled, 0), barWidth)
        lines.append("  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "] " + times)
        if let t = s.transcode {
            // What ffmpeg has written against the same duration: how far ahead of playback it is.
            let written = "\(clock(t.position)) \(t.action == "remux" ? "remuxed" : "transcoded") (\(t.state))"
            let width = max(10, width - written.count - 6)
            var done = t.state == "finished" ? width : 0
            if t.state != "finished", let duration, duration > 0 { done = Int((t.position / duration * Double(width)).rounded(.down)) }
            done = min(max(done, 0), width)
            lines.append("  [" + String(repeating: "=", count: done) + String(repeating: " ", count: width - done) + "] " + written)
        }
        var volume = "  volume "
        if let level = s.deviceVolume { volume += "\(Int((level * 100).rounded()))%" } else { volume += "?" }
        if s.deviceMuted == true { volume += " (muted)" }
        lines.append(volume)
        if s.isGroup { lines.append(clip("  members: " + membersText(s), width)) }
        if !s.castingGroups.isEmpty { lines.append(clip("  plays in group: " + s.castingGroups.map(\.name).joined(separator: ", "), width)) }
        if let owner = ownerText(s) { lines.append(clip("  owner: " + owner, width)) }
        if let screen = s.screen { lines.append(clip("  screen: " + screen.text, width)) }
        return lines
    }

    /// `job lobby, schedule entry 2`, `command`, `another sender`; nil without a hub's owner.
    static func ownerText(_ s: StatusSnapshot) -> String? {
        guard let kind = s.ownerKind else { return nil }
        let text = switch kind {
        case "job": "job \(TerminalText.safe(s.owner ?? "?"))"
        case "other": "another sender"
        default: kind
        }
        return text + (s.ownerDetail.map { ", \($0)" } ?? "")
    }

    /// `Kitchen (playing), Den left (left)`: each member and its playback in the group.
    static func membersText(_ s: StatusSnapshot) -> String {
        guard !s.groupMembers.isEmpty else { return "unknown" }
        return s.groupMembers.map { member in
            var text = member.name
            if let channel = member.channel { text += " \(channel.lowercased())" }
            switch member.playbackState {
            case "LEFT": text += " (left: casting on its own)"
            case let state?: text += " (\(state.lowercased()))"
            case nil: break
            }
            return text
        }.joined(separator: ", ")
    }

    /// `Living Room TV: PLAYING "Title" 01:02 / 02:00 volume 40% [4K HDR]`, the position at `now`
    /// (default: when the status arrived).
    static func oneLine(_ s: StatusSnapshot, now: Double? = nil) -> String {
        var line = "\(s.deviceName): \(s.state)"
        // One line whatever the title holds (a line feed in it would fake another line).
        if let title = s.title { line += " \"\(TerminalText.safe(title))\"" }
        if let page = s.page, s.media == nil { line += " " + TerminalText.safe(page.url) }
        if s.state == "UNKNOWN" { line += " (unreachable" + (s.link.map { ", link \($0)" } ?? "") + ")" }
        if let owner = ownerText(s), s.ownerKind != "nobody", s.ownerKind != "unknown" { line += " [\(owner)]" }
        if let position = s.position(at: now ?? s.receivedAt) {
            line += " \(clock(position))"
            if let duration = s.media?.effectiveMedia?.duration { line += " / \(clock(duration))" }
        }
        if let volume = s.deviceVolume { line += " volume \(Int((volume * 100).rounded()))%" }
        if s.deviceMuted == true { line += " muted" }
        if let badge = s.badge { line += " [\(badge)]" }
        if s.isGroup { line += " members: " + membersText(s) }
        if !s.castingGroups.isEmpty { line += " in group " + s.castingGroups.map(\.name).joined(separator: ", ") }
        if let t = s.transcode { line += " (\(t.action) \(t.state): \(clock(t.position)) written)" }
        return line
    }

    /// `1:02:03` or `02:03`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds.isFinite ? seconds : 0))
        let h = total / 3600, m = (total / 60) % 60, sec = total % 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(sec))" : "\(two(m)):\(two(sec))"
    }

    static func clip(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }

    /// The terminal width (COLUMNS, then TIOCGWINSZ, then 80).
    static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}
