import CastCore

/// The arguments the control commands share between the command line, the API and MQTT, and the
/// one place that checks them: a seek position, a volume in percent, a queue action.
package enum ControlArguments {
    /// Where to seek: seconds from the start, or an offset from the current position.
    package struct Seek: Sendable, Equatable {
        package var seconds: Double
        package var relative: Bool
    }

    /// The furthest a seek goes: a year (366 days) in seconds.
    package static let maximumSeek = 86_400.0 * 366

    /// `90`, `1:30`, `1:02:03`, `+30`, `-10`. Minutes and seconds below an hour or minute field
    /// are 0–59 (`99:99:99` is refused).
    package static func seek(_ text: String) throws(ControlError) -> Seek {
        var body = Substring(text.trimmingSpaces)
        var sign = 0.0
        if body.first == "+" { sign = 1; body = body.dropFirst() } else if body.first == "-" { sign = -1; body = body.dropFirst() }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        let wrong = ControlError.usage("bad_position", "seek: \"\(text)\" is not seconds or [h:]mm:ss (e.g. 90, 1:30, 1:02:03, +30, -10)")
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else { throw wrong }
        var seconds = 0.0
        for (index, part) in parts.enumerated() {
            let last = index == parts.count - 1
            guard let value = Double(part), value >= 0, value.isFinite, last || value == value.rounded() else { throw wrong }
            // Below a higher field, minutes and seconds count up to 59.
            if index > 0, value >= 60 {
                throw ControlError.usage("bad_position", "seek: \"\(text)\": \(part) is not a valid number of "
                                         + (index == parts.count - 1 ? "seconds" : "minutes") + " (0-59)")
            }
            seconds = seconds * 60 + value
        }
        guard seconds <= maximumSeek else { throw ControlError.usage("bad_position", "seek: \"\(text)\" is more than a year") }
        return Seek(seconds: sign == 0 ? seconds : sign * seconds, relative: sign != 0)
    }

    /// A seek position as the API takes it: a number of seconds from the start, or the text form
    /// (which may also be an offset: `"+30"`, `"-10"`).
    package static func seek(_ value: JSONValue?) throws(ControlError) -> Seek {
        switch value {
        case .int(let n)? where n < 0: throw ControlError.usage("bad_position", "seek: \(n) is below 0; an offset is a string such as \"-10\"")
        case .int(let n)?: return try seek(String(n))
        case .double(let d)? where d.isFinite && d >= 0 && d <= maximumSeek: return Seek(seconds: d, relative: false)
        case .string(let text)?: return try seek(text)
        default: throw ControlError.usage("bad_position", "seek needs \"position\": seconds or \"[h:]mm:ss\", \"+30\", \"-10\"")
        }
    }

    /// A volume in whole percent, or a change by whole percent points.
    package struct Volume: Sendable, Equatable {
        package var percent: Int
        package var relative: Bool

        /// The level (0…1) this makes of `current` (0…1).
        package func level(from current: Double) -> Double {
            let target = relative ? current * 100 + Double(percent) : Double(percent)
            return min(100, max(0, target)) / 100
        }
    }

    /// `40`, `+10`, `-10`: percent, as everywhere in castline. A fraction such as `0.5` is refused
    /// (it is 0.5 %, which is never what was meant).
    package static func volume(_ text: String) throws(ControlError) -> Volume {
        let trimmed = text.trimmingSpaces
        let relative = trimmed.hasPrefix("+") || trimmed.hasPrefix("-")
        let number = trimmed.hasPrefix("+") ? String(trimmed.dropFirst()) : trimmed
        if let value = Int(number), relative ? (1...100).contains(abs(value)) : (0...100).contains(value) {
            return Volume(percent: value, relative: relative)
        }
        if let fraction = Double(number), fraction.isFinite, abs(fraction) < 1, fraction != 0 {
            let percent = Int((abs(fraction) * 100).rounded())
            throw ControlError.usage("volume_not_percent", "volume: \"\(text)\" is not a whole percent; volume is in percent (0-100): did you mean \(relative && fraction < 0 ? "-" : relative ? "+" : "")\(percent)?")
        }
        throw ControlError.usage("bad_volume", "volume: \"\(text)\" must be a whole percent 0-100, or +N / -N percent points")
    }

    /// A volume as the API takes it, under `level`: a number is a level (0-100), a string may
    /// also be a change (`"+10"`, `"-10"`).
    package static func volume(_ value: JSONValue?) throws(ControlError) -> Volume {
        switch value {
        case .int(let n)? where n < 0: throw ControlError.usage("bad_volume", "volume: \(n) is below 0; a change is a string such as \"-10\"")
        case .int(let n)?: return try volume(String(n))
        case .double(let d)? where d == d.rounded() && d.isFinite && d >= 0 && d <= 100: return try volume(String(Int(d)))
        case .double(let d)?: return try volume(String(d))
        case .string(let text)?: return try volume(text)
        default: throw ControlError.usage("bad_volume", "volume needs \"level\": a whole percent 0-100, or \"+10\" / \"-10\"")
        }
    }

    /// A queue action: next, prev, jump to an item, remove items, or the repeat mode.
    package enum Queue: Sendable, Equatable {
        case next, previous
        case jump(item: Int)
        case remove(items: [Int])
        case repeatMode(RepeatMode)

        package static let repeatModes: [String: RepeatMode] = ["off": .off, "all": .all, "single": .single, "shuffle": .allAndShuffle]
    }

    /// `next`, `prev`, `jump ID`, `remove ID…`, `repeat off|all|single|shuffle`.
    package static func queue(action: String, values: [String]) throws(ControlError) -> Queue {
        switch action {
        case "next", "prev", "previous":
            guard values.isEmpty else { throw ControlError.usage("bad_queue", "queue \(action) takes no values") }
            return action == "next" ? .next : .previous
        case "jump":
            guard values.count == 1, let item = Int32(values[0]) else { throw ControlError.usage("bad_queue", "queue jump takes one item id") }
            return .jump(item: Int(item))
        case "remove":
            let items = values.compactMap { Int32($0).map(Int.init) }
            guard !values.isEmpty, items.count == values.count else { throw ControlError.usage("bad_queue", "queue remove takes item ids") }
            return .remove(items: items)
        case "repeat":
            guard values.count == 1, let mode = Queue.repeatModes[values[0]] else {
                throw ControlError.usage("bad_queue", "queue repeat takes one of: " + Queue.repeatModes.keys.sorted().joined(separator: ", "))
            }
            return .repeatMode(mode)
        default:
            throw ControlError.usage("bad_queue", "queue: unknown action \"\(action)\" (next, prev, jump, remove, repeat)")
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (no Foundation).
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
