/// When a job's entries are in force (dayparting): days of the week and a time range each, in
/// a time zone. Pure: every question comes with its instant (Unix seconds), so tests ask it on
/// any clock. A range whose end is not after its start runs past midnight into the next day.
package struct Schedule: Sendable, Hashable {
    package struct Entry: Sendable, Hashable {
        /// 0 Sunday … 6 Saturday.
        package var days: Set<Int>
        /// Seconds after local midnight: the start, and the end (86400: midnight at the end).
        package var from: Int
        package var to: Int
        package var mark: SourceMark

        package init(days: Set<Int>, from: Int, to: Int, mark: SourceMark = SourceMark(line: 0, column: 0)) {
            self.days = days
            self.from = from
            self.to = to
            self.mark = mark
        }

        /// Entries are the same whatever line they were read from.
        package static func == (a: Entry, b: Entry) -> Bool { a.days == b.days && a.from == b.from && a.to == b.to }
        package func hash(into hasher: inout Hasher) {
            hasher.combine(days)
            hasher.combine(from)
            hasher.combine(to)
        }

        var crossesMidnight: Bool { to <= from }

        /// Whether the entry is in force at local `weekday` and `second` of that day.
        func covers(weekday: Int, second: Int) -> Bool {
            if crossesMidnight {
                return (days.contains(weekday) && second >= from) || (days.contains((weekday + 6) % 7) && second < to)
            }
            return days.contains(weekday) && second >= from && second < to
        }
    }

    package var entries: [Entry]
    package var zone: ZoneRules

    package init(entries: [Entry], zone: ZoneRules) {
        self.entries = entries
        self.zone = zone
    }

    /// Local weekday (0 Sunday) and second of day at `instant`.
    func local(_ instant: Int64) -> (weekday: Int, second: Int) {
        let local = instant + Int64(zone.offset(at: instant))
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let second = Int(local - day * 86_400)
        return (Int(((day % 7) + 7 + 4) % 7), second)   // 1970-01-01 was a Thursday
    }

    /// The index of the entry in force at `instant`, nil when none is.
    package func entry(at instant: Int64) -> Int? {
        let (weekday, second) = local(instant)
        return entries.firstIndex { $0.covers(weekday: weekday, second: second) }
    }

    /// The next instant after `instant` at which the entry in force changes (within 8 days;
    /// nil when it never does, e.g. one entry every day all day).
    package func nextSwitch(after instant: Int64) -> Int64? {
        let current = entry(at: instant)
        // Candidate boundaries: every entry's start and end on each of the next 8 local days,
        // converted to instants with the offset in force there (checked against both sides of
        // a transition by evaluating the entry at the candidate itself).
        var candidates: [Int64] = []
        let base = instant + Int64(zone.offset(at: instant))
        let today = base >= 0 ? base / 86_400 : (base - 86_399) / 86_400
        for day in today...(today + 8) {
            for entry in entries {
                for second in [entry.from, entry.to] {
                    let localInstant = day * 86_400 + Int64(second)
                    let guess = localInstant - Int64(zone.offset(at: localInstant))
                    let exact = localInstant - Int64(zone.offset(at: guess))
                    if exact > instant { candidates.append(exact) }
                }
            }
        }
        return candidates.sorted().first { entry(at: $0) != current }
    }

    /// The first instant after `instant` at which an entry starts (within 8 days; nil when no
    /// entry has a day). What an announce job's `at:` times are asked.
    package func nextStart(after instant: Int64) -> Int64? {
        let base = instant + Int64(zone.offset(at: instant))
        let today = base >= 0 ? base / 86_400 : (base - 86_399) / 86_400
        var next: Int64?
        for day in (today - 1)...(today + 8) {
            let weekday = Int(((day % 7) + 7 + 4) % 7)
            for entry in entries where entry.days.contains(weekday) {
                let localInstant = day * 86_400 + Int64(entry.from)
                let guess = localInstant - Int64(zone.offset(at: localInstant))
                let exact = localInstant - Int64(zone.offset(at: guess))
                if exact > instant, next.map({ exact < $0 }) ?? true { next = exact }
            }
        }
        return next
    }

    /// Pairs of entries (indices) that are in force at the same time on some day.
    package var overlaps: [(Int, Int)] {
        var found: [(Int, Int)] = []
        for i in entries.indices {
            for j in entries.indices where j > i {
                // Two ranges overlap exactly when one starts while the other is in force.
                let a = entries[i], b = entries[j]
                let clash = a.days.contains { b.covers(weekday: $0, second: a.from) } || b.days.contains { a.covers(weekday: $0, second: b.from) }
                if clash { found.append((i, j)) }
            }
        }
        return found
    }
}
