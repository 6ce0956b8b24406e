/// Text from outside castline (a device's name or title, a broker's payload, a log field) made
/// safe to print on a terminal: every control character (C0 but tab, DEL, C1) and every
/// bidirectional override is written as a visible `\uXXXX` escape, so a title holding `ESC[2J`,
/// an OSC 8 link, a CR or U+202E cannot clear the screen, hide text, fake a link or reorder a
/// line. The escape is also a valid JSON escape, so a JSON line stays the same JSON. Pure.
package enum TerminalText {
    /// `text` with every unsafe scalar escaped; text without one comes back as it is.
    package static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` of several lines (castline's own output: help, tables) with every unsafe scalar
    /// escaped but the line feeds between its lines.
    package static func safeLines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { safe(String($0)) }.joined(separator: "\n")
    }

    /// C0 controls but tab, DEL, C1 controls, and the bidirectional embeddings, overrides and
    /// isolates (U+202A–U+202E, U+2066–U+2069).
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (v < 0x20 && v != 0x09) || (0x7F...0x9F).contains(v) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }
}
