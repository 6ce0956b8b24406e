import Synchronization

/// The names behind the tokens of served URLs, so that no view shows a token: events, MQTT
/// state, info logs and `status` show `clip.mp4` where the device reports
/// `http://10.0.0.5:41289/<token>/clip.mp4`. Process-wide (every media server registers its
/// tokens here); keeps the newest ``capacity`` tokens, revoked ones included (a device may report
/// the URL after it stopped being served). Thread-safe.
package final class ServedMediaNames: Sendable {
    package static let shared = ServedMediaNames()
    package static let capacity = 8192

    private struct State {
        var names: [String: String] = [:]
        var order: [String] = []
    }

    private let state = Mutex(State())

    func register(token: String, name: String) {
        state.withLock { state in
            if state.names.updateValue(name, forKey: token) == nil { state.order.append(token) }
            if state.order.count > Self.capacity {
                let drop = state.order.count - Self.capacity
                for old in state.order.prefix(drop) { state.names[old] = nil }
                state.order.removeFirst(drop)
            }
        }
    }

    /// The name served under `token`, nil for a token castline never issued.
    package func name(forToken token: Substring) -> String? {
        state.withLock { $0.names[String(token)] }
    }

    /// `text` with every URL of a served file (`http://…/<token>/…`, up to the next space or
    /// quote) replaced by the file's name. Text without such a URL comes back as it is.
    package func redact(_ text: String) -> String {
        guard text.contains("http://") else { return text }
        var out = ""
        var rest = Substring(text)
        while let start = rest.firstRange(of: "http://") {
            out += rest[..<start.lowerBound]
            let urlEnd = rest[start.lowerBound...].firstIndex { $0 == " " || $0 == "\"" || $0 == "'" || $0 == "\n" || $0 == "<" || $0 == ">" } ?? rest.endIndex
            let url = rest[start.lowerBound..<urlEnd]
            out += replacement(for: url) ?? String(url)
            rest = rest[urlEnd...]
        }
        return out + rest
    }

    /// The name for a served file's URL; nil when the URL is not one.
    private func replacement(for url: Substring) -> String? {
        let afterScheme = url.dropFirst("http://".count)
        guard let slash = afterScheme.firstIndex(of: "/") else { return nil }
        let path = afterScheme[afterScheme.index(after: slash)...]
        let token = path.prefix { $0 != "/" }
        guard token.count == 32, token.allSatisfy(\.isHexDigit), let name = name(forToken: token) else { return nil }
        let below = path.dropFirst(token.count + 1)
        // A folder's file (hls/seg1.m4s) keeps its leaf after the folder's name.
        if name.hasSuffix("/") || below.contains("/") {
            let leaf = below.split(separator: "/").last.map(String.init) ?? ""
            return name.hasSuffix("/") ? name + leaf : name
        }
        return name
    }
}
