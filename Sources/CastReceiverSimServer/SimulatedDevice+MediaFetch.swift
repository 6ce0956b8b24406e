import CastCore
import CastProtocol
import CCastShims
import NIOCore

extension SimulatedDevice {
    /// How many fetch results a device keeps for the control socket's `list`.
    static let mediaFetchHistory = 20

    /// Real devices fetch the media after a LOAD; the simulator does too, with a Range request
    /// of the first 64 KiB, but only from loopback hosts (tests and demos never send traffic
    /// elsewhere). The result is logged and listed under `mediaFetches` in `list`.
    /// Called on the device's loop.
    func fetchMediaIfLoad(_ message: CastMessage) {
        guard message.namespace == .media, let text = message.payload.text, Self.mayBeLoopbackLoad(text),
              let json = try? JSONValue.parse(text), json["type"]?.string == "LOAD",
              let media = json["media"] else { return }
        guard let url = media["contentUrl"]?.string ?? media["contentId"]?.string, url.lowercased().hasPrefix("http") else { return }
        guard Self.isLoopbackURL(url) else {
            log.debug("media not fetched: \(url) is not on a loopback host", ["url": .string(url)])
            return
        }
        let group = loop
        MediaFetcher.fetch(url: url, group: group).whenSuccess { [self] result in
            loop.execute { [self] in
                mediaFetches.append(result.jsonValue)
                if mediaFetches.count > Self.mediaFetchHistory { mediaFetches.removeFirst(mediaFetches.count - Self.mediaFetchHistory) }
                if let error = result.error {
                    log.warning("media fetch failed: \(url): \(error)", ["url": .string(url)])
                } else {
                    log.info("media fetched: \(url) → HTTP \(result.status ?? 0), \(result.bytes) bytes", [
                        "url": .string(url), "status": .int(result.status ?? 0), "bytes": .int(result.bytes),
                    ])
                }
            }
        }
    }

    /// Whether `text` can be a LOAD whose media is on a loopback host: it holds `"LOAD"` and
    /// `127.`, `localhost` or `::1`. A byte scan, so the LOADs of media elsewhere (which the
    /// simulator never fetches) are not parsed a second time: the state machine has decoded them
    /// already.
    static func mayBeLoopbackLoad(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            func has(_ needle: StaticString) -> Bool {
                castline_memmem(bytes.baseAddress, bytes.count, needle.utf8Start, needle.utf8CodeUnitCount) != nil
            }
            return has("\"LOAD\"") && (has("127.") || has("localhost") || has("::1"))
        }
    }

    /// `http://127.x.y.z…`, `http://[::1]…`, `http://localhost…`.
    static func isLoopbackURL(_ url: String) -> Bool {
        guard let schemeEnd = url.firstRange(of: "://") else { return false }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var host = Substring(authority)
        if host.hasPrefix("[") {
            host = host.dropFirst().prefix { $0 != "]" }
            return host == "::1"
        }
        host = host.prefix { $0 != ":" }
        return host == "localhost" || host.hasPrefix("127.")
    }
}
