/// `volume.controlType` of the device (open enum; lower-case on the wire).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct VolumeControlType: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `attenuation`: Volume can be changed in steps of `stepInterval`.
    public static let attenuation: VolumeControlType = "attenuation"
    /// `fixed`: Volume cannot be changed.
    public static let fixed: VolumeControlType = "fixed"
    /// `master`: Volume follows a system master volume.
    public static let master: VolumeControlType = "master"

    public static let knownValues: [VolumeControlType] = [
        .attenuation, .fixed, .master,
    ]
}
