import CastCore
import CastHTTP
import CastlineConfig

/// A video wall to start (`POST /v1/sync`, `castline cast … --sync`): the same media on every
/// device named, started at one instant and kept together (docs/sync.md).
package struct SyncArguments: Sendable, Equatable {
    /// Device references (ids, names, aliases) or globs.
    package var devices: [String]
    /// http(s) URLs: the wall's playlist, played in step.
    package var media: [String]
    package var contentType: String?
    package var title: String?
    /// Seconds into the first item.
    package var start: Double
    /// Start the playlist again after its last item.
    package var repeats: Bool
    /// The wall's name (default: the devices, joined).
    package var name: String
    /// Starts measured to teach each TV's start latency, and nothing kept playing after them
    /// (`castline sync calibrate`).
    package var calibrate: Int

    package init(devices: [String], media: [String], name: String? = nil) {
        self.devices = devices
        self.media = media
        contentType = nil
        title = nil
        start = 0
        repeats = false
        calibrate = 0
        let joined = devices.joined(separator: ",")
        self.name = name ?? (joined.utf8.count <= 64 ? joined : "\(devices[0].prefix(40))+\(devices.count - 1)")
    }

    package init(json: JSONValue) throws(ControlError) {
        let body = try ArgumentObject(json, action: .sync)
        let devices: [String]
        if let one = try? body.string("devices") { devices = [one] } else { devices = try body.strings("devices") ?? [] }
        guard !devices.isEmpty, devices.allSatisfy({ !$0.isEmpty }) else {
            let media = body.value("media") == nil ? " and \"media\" (an http(s) URL, or a list of them)" : ""
            throw ControlError.usage("missing_devices", "sync needs \"devices\" (a glob such as \"Wall*\", or a list of devices)" + media)
        }
        for pattern in devices where pattern.contains(where: { "*?[".contains($0) }) {
            do { _ = try DeviceSelector(pattern) } catch { throw ControlError.usage("bad_devices", "sync: \"devices\" \(pattern): \(error)") }
        }
        let media: [String]
        if let one = try? body.string("media") { media = [one] } else { media = try body.strings("media") ?? [] }
        guard !media.isEmpty else { throw ControlError.usage("missing_media", "sync needs \"media\": an http(s) URL, or a list of them (a playlist)") }
        guard media.count <= 50 else { throw ControlError.usage("too_many_items", "sync: at most 50 items, not \(media.count)") }
        for url in media where HTTPURL(url) == nil {
            throw ControlError.usage("bad_media", "sync: \"\(url)\" is not an http(s) URL (a wall's TVs each fetch the media themselves)")
        }
        self.init(devices: devices, media: media, name: try body.string("name"))
        contentType = try body.string("content_type")
        title = try body.string("title")
        if let start = try body.number("start") {
            guard start >= 0, start <= 86_400 * 366 else { throw ControlError.usage("bad_start", "sync: \"start\" must be 0 or more seconds") }
            self.start = start
        }
        repeats = try body.bool("repeat") ?? false
        if let count = try body.number("calibrate") {
            guard count >= 1, count <= 20, count == count.rounded() else {
                throw ControlError.usage("bad_calibrate", "sync: \"calibrate\" must be a number of starts, 1-20")
            }
            calibrate = Int(count)
        }
        if name.isEmpty || name.utf8.count > 64 { throw ControlError.usage("bad_name", "sync: \"name\" must be 1-64 bytes") }
    }
}
