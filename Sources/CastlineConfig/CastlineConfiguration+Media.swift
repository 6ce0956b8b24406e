/// `media:`: how castline remuxes and transcodes local files for devices ([media.md](media.md)).
///
/// ```yaml
/// media:
///   hardware_encoding: vaapi          # off (default) or vaapi
///   vaapi_device: /dev/dri/renderD128 # the render node (default)
/// ```
public struct MediaSettings: Sendable, Equatable {
    public enum HardwareEncoding: String, Sendable, CaseIterable { case off, vaapi }
    /// Hardware video encoding for transcodes, used only when allowed here and the device node
    /// exists; software (libx264) otherwise, and after a hardware attempt fails.
    public var hardwareEncoding = HardwareEncoding.off
    public var vaapiDevice = "/dev/dri/renderD128"
    public init() {}
}

extension CastlineConfiguration {
    mutating func decodeMedia(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "media", allowed: ["hardware_encoding", "vaapi_device"]) else { return }
        if let value = map.choice("hardware_encoding", MediaSettings.HardwareEncoding.allCases.map(\.rawValue)) {
            media.hardwareEncoding = .init(rawValue: value)!
        }
        if let device = map.string("vaapi_device") {
            if device.hasPrefix("/dev/") { media.vaapiDevice = device } else {
                reader.error(map.value("vaapi_device")!.mark, "media.vaapi_device must be a device node under /dev, not \"\(device)\"")
            }
        }
    }
}
