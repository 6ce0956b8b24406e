import ArgumentParser
import Glibc

/// What castline adds to ArgumentParser's help: AP wraps every section at the terminal width
/// except the `USAGE:` line (and the `Usage:` line of a usage error), which a command with the
/// shared device options makes 200 columns long, and the closing "See 'castline help …'" line.
/// These lines are wrapped here at the same width. Pure apart from ``width(environment:)``.
enum HelpText {
    /// The width ArgumentParser renders help at: `COLUMNS` when it is a number, else the
    /// terminal on standard output, else 80.
    static func width(environment: [String: String]) -> Int {
        if let columns = environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 { return columns }
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }

    /// `text` with the lines AP leaves whole broken when longer than `width`: a `USAGE: ` /
    /// `Usage: ` line between synopsis items (`[--host <host> ...]` stays whole), continued 7
    /// columns in; the `  See '…'` line between words, continued at its indentation. A word or
    /// item longer than the width stays whole on a line of its own. Other lines (an error's
    /// message) are left as they are.
    static func wrappingUsage(_ text: String, width: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.count > width else { return String(line) }
            if line.hasPrefix("USAGE: ") || line.hasPrefix("Usage: ") {
                return fill(items(line.dropFirst(7)), lead: String(line.prefix(7)), indent: String(repeating: " ", count: 7), width: width)
            }
            guard line.hasPrefix("  See '") else { return String(line) }
            let indent = String(line.prefix { $0 == " " })
            let words = line.dropFirst(indent.count).split(separator: " ").map(String.init)
            return fill(words, lead: indent, indent: indent, width: width)
        }.joined(separator: "\n")
    }

    /// `pieces` joined by spaces after `lead`, a new line (starting with `indent`) before a piece
    /// that would pass `width`.
    static func fill(_ pieces: [String], lead: String, indent: String, width: Int) -> String {
        var lines: [String] = []
        var current = lead
        var empty = true
        for piece in pieces {
            if !empty, current.count + 1 + piece.count > width {
                lines.append(current)
                current = indent + piece
            } else {
                current += (empty ? "" : " ") + piece
            }
            empty = false
        }
        lines.append(current)
        return lines.joined(separator: "\n")
    }

    /// The synopsis split at spaces outside brackets, a trailing `...` kept with its item.
    static func items(_ synopsis: Substring) -> [String] {
        var items: [String] = []
        var current = ""
        var depth = 0
        for character in synopsis {
            switch character {
            case "[", "<", "(": depth += 1
            case "]", ">", ")": depth = max(depth - 1, 0)
            default: break
            }
            if character == " ", depth == 0 {
                if !current.isEmpty { items.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { items.append(current) }
        var merged: [String] = []
        for item in items {
            if item == "...", let last = merged.popLast() { merged.append(last + " ...") } else { merged.append(item) }
        }
        return merged
    }

    /// Whether ArgumentParser's message for these arguments is help meant for a person (not a
    /// completion script or the JSON help dump, which must pass through untouched).
    static func isForPeople(arguments: [String]) -> Bool {
        !arguments.contains { $0.hasPrefix("--generate-completion-script") || $0 == "--experimental-dump-help" || $0.hasPrefix("---completion") }
    }
}

extension Castline {
    /// ArgumentParser's `main`, with its help and usage messages passed through
    /// ``HelpText/wrappingUsage(_:width:)``.
    static func main() async {
        do {
            var command = try await asyncParseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            var text = fullMessage(for: error)
            let code = exitCode(for: error)
            if HelpText.isForPeople(arguments: CommandLine.arguments) {
                text = HelpText.wrappingUsage(text, width: HelpText.width(environment: environment()))
            }
            if !text.isEmpty {
                if code == .success { printLine(text) } else { printError(text) }
            }
            Glibc.exit(code.rawValue)
        }
    }
}
