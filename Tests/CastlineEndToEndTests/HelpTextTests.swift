import Testing
import Foundation

/// `castline <command> --help` for every command the root help lists (and their subcommands),
/// run as the built binary: no default said twice, and no line wider than COLUMNS unless it is
/// one word that cannot be broken.
@Suite struct HelpTextTests {
    typealias E2E = DoctorAndPluginsTests

    /// The command paths under `path`, read from the SUBCOMMANDS section of its help.
    static func commands(under path: [String] = [], home: String) throws -> [[String]] {
        let help = try E2E.run(path + ["--help"], home: home, environment: ["COLUMNS": "1000"]).stdout
        var found: [[String]] = []
        var inSubcommands = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("SUBCOMMANDS:") { inSubcommands = true; continue }
            guard inSubcommands else { continue }
            if line.isEmpty || !line.hasPrefix("  ") { break }
            guard !line.hasPrefix("   "), let name = line.split(separator: " ").first else { continue }
            let child = path + [String(name)]
            found.append(child)
            found += try commands(under: child, home: home)
        }
        return found
    }

    /// The OPTIONS and ARGUMENTS entries of a help text rendered wide: label and help joined.
    static func entries(_ help: String) -> [String] {
        var entries: [String] = []
        var inList = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "OPTIONS:" || line == "ARGUMENTS:" { inList = true; continue }
            guard inList else { continue }
            if line.isEmpty { inList = false; continue }
            if line.hasPrefix("  "), !line.hasPrefix("   ") {
                entries.append(String(line.drop { $0 == " " }))
            } else if !entries.isEmpty {
                entries[entries.count - 1] += " " + line.drop { $0 == " " }
            }
        }
        return entries
    }

    /// The entry's help says its default twice: ArgumentParser's `(default: …)` (or
    /// `(values: …; default: …)`) at the end, and "default" in the text before it.
    static func saysDefaultTwice(_ entry: String) -> Bool {
        guard entry.hasSuffix(")") else { return false }
        let printed: Range<String.Index>
        if let values = entry.range(of: "(values: ", options: .backwards), entry[values.lowerBound...].contains("; default: ") {
            printed = values
        } else if let plain = entry.range(of: "(default: ", options: .backwards) {
            printed = plain
        } else {
            return false
        }
        return entry[..<printed.lowerBound].lowercased().contains("default")
    }

    @Test func theDuplicateCheckSeesBothForms() {
        #expect(Self.saysDefaultTwice("--play-timeout <t>  Seconds to wait (default 30). (default: 30.0)"))
        #expect(Self.saysDefaultTwice("--mode <m>  a or b, default a. (values: a, b; default: a)"))
        #expect(!Self.saysDefaultTwice("--play-timeout <t>  Seconds to wait. (default: 30.0)"))
        #expect(!Self.saysDefaultTwice("--timeout <t>  Seconds (default: config discovery.timeout, 5)."))
        #expect(!Self.saysDefaultTwice("--layout <l>  Layout. (values: addresses, ports; default: addresses)"))
    }

    @Test func noCommandSaysADefaultTwiceAndHelpFitsTheTerminalWidth() throws {
        let home = E2E.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let commands = try Self.commands(home: home)
        #expect(commands.count > 25, "\(commands)")
        #expect(commands.contains(["config", "check"]) && commands.contains(["channel", "request"]))
        for path in [[]] + commands {
            let wide = try E2E.run(path + ["--help"], home: home, environment: ["COLUMNS": "1000"])
            #expect(wide.status == 0, "\(path): \(wide.stderr)")
            let twice = Self.entries(wide.stdout).filter(Self.saysDefaultTwice)
            #expect(twice.isEmpty, "castline \(path.joined(separator: " ")) --help says a default twice: \(twice)")
            let narrow = try E2E.run(path + ["--help"], home: home, environment: ["COLUMNS": "60"])
            let over = narrow.stdout.split(separator: "\n").filter { line in
                line.count > 60 && line.drop { $0 == " " }.contains(" ")
            }
            #expect(over.isEmpty, "castline \(path.joined(separator: " ")) --help at 60 columns: \(over)")
        }
        // A usage error's Usage: line is wrapped too.
        let usage = try E2E.run(["status", "--bogus"], home: home, environment: ["COLUMNS": "60"])
        #expect(usage.status == 64)
        #expect(usage.stderr.split(separator: "\n").allSatisfy { $0.count <= 60 }, "\(usage.stderr)")
        #expect(usage.stderr.contains("Usage: castline status [--device <device>]"))
    }
}
