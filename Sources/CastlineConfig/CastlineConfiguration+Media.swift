/// `media:`: how castline remuxes and transcodes local files for devices ([media.md](media.md)).
///
/// ```yaml
/// media:
///   roots: [/srv/signage, /home/shared/videos]  # the only folders local files are served from
///   port: 8100-8119                    # the media server's port, or a range (default: any free port)
///   hardware_encoding: vaapi          # off (default) or vaapi
///   vaapi_device: /dev/dri/renderD128 # the render node (default)
/// ```
package struct MediaSettings: Sendable, Equatable {
    /// The folders castline run serves local files from (`media.roots`), absolute; empty: none
    /// for commands, any for the config's own jobs.
    package var roots: [String] = []
    /// The media server's port, or the range it takes the first free one from (`media.port`);
    /// `0...0`: any free port.
    package var ports: ClosedRange<Int> = 0...0
    package enum HardwareEncoding: String, Sendable, CaseIterable { case off, vaapi }
    /// Hardware video encoding for transcodes, used only when allowed here and the device node
    /// exists; software (libx264) otherwise, and after a hardware attempt fails.
    package var hardwareEncoding = HardwareEncoding.off
    package var vaapiDevice = "/dev/dri/renderD128"
    package init() {}
}

extension CastlineConfiguration {
    mutating func decodeMedia(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "media", allowed: ["roots", "port", "hardware_encoding", "vaapi_device"]) else { return }
        if let roots = map.strings("roots"), let node = map.value("roots") {
            for root in roots where !root.hasPrefix("/") {
                reader.error(node.mark, "media.roots must list absolute folders, not \"\(root)\"")
            }
            media.roots = roots.filter { $0.hasPrefix("/") }
        }
        if let node = map.value("port"), let text = reader.string(node, path: "media.port") {
            if let ports = Self.portRange(text) { media.ports = ports } else {
                reader.error(node.mark, "media.port must be a port (8100), a range of ports (8100-8119) between 1 and 65535, or 0 (any), not \"\(text)\"")
            }
        }
        if let value = map.choice("hardware_encoding", MediaSettings.HardwareEncoding.allCases.map(\.rawValue)) {
            media.hardwareEncoding = .init(rawValue: value)!
        }
        if let device = map.string("vaapi_device") {
            if device.hasPrefix("/dev/") { media.vaapiDevice = device } else {
                reader.error(map.value("vaapi_device")!.mark, "media.vaapi_device must be a device node under /dev, not \"\(device)\"")
            }
        }
    }

    /// `8100` → 8100...8100, `8100-8119` → 8100...8119, `0` → any port; nil for anything else.
    static func portRange(_ text: String) -> ClosedRange<Int>? {
        if text.filter({ $0 != " " }) == "0" { return 0...0 }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0.filter { $0 != " " }) }
        guard (1...2).contains(parts.count), let low = parts.first ?? nil, let high = parts.last ?? nil,
              (1...65535).contains(low), (low...65535).contains(high) else { return nil }
        return low...high
    }
}
