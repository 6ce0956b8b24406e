@testable import CastCore
import Testing

/// Text from a device printed on a terminal cannot drive it.
@Suite struct TerminalTextTests {
    @Test("ESC[2J, OSC 0 and OSC 8, CR, BEL, C1 and U+202E are escaped; tabs and ordinary text stay")
    func escapes() {
        let title = "Movie\u{1B}[2J\u{1B}]0;owned\u{07}\u{1B}]8;;http://evil/\u{1B}\\link\u{1B}]8;;\u{1B}\\\r\u{9B}31m\u{202E}txt.exe\tok é 🎬"
        let safe = TerminalText.safe(title)
        #expect(safe == "Movie\\u001b[2J\\u001b]0;owned\\u0007\\u001b]8;;http://evil/\\u001b\\link\\u001b]8;;\\u001b\\\\u000d\\u009b31m\\u202etxt.exe\tok é 🎬")
        #expect(!safe.unicodeScalars.contains { TerminalText.isUnsafe($0) })
        #expect(TerminalText.safe("plain title") == "plain title")
    }

    @Test("castline's own lines keep their line feeds; what is between them is escaped")
    func lines() {
        #expect(TerminalText.safeLines("OVERVIEW: castline\n\nUSAGE: castline <subcommand>") == "OVERVIEW: castline\n\nUSAGE: castline <subcommand>")
        #expect(TerminalText.safeLines("a\u{1B}[2J\nb\r") == "a\\u001b[2J\nb\\u000d")
        #expect(TerminalText.safe("one\ntwo") == "one\\u000atwo", "a field is one line")
    }
}
