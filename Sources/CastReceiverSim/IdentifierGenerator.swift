/// Deterministic ids for one device: session/transport UUIDs and shuffle order, from a seed
/// (SplitMix64). Value type.
public struct IdentifierGenerator: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// SplitMix64's step: the state advances by this odd constant on every ``next()``.
    static let step: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The seed of device `index` in one simulator. Each device draws from its own stretch of
    /// the one SplitMix64 sequence, 2^40 steps from its neighbours', so two devices of a
    /// simulator never reach the same state — and never make the same session id — unless one of
    /// them draws 2^40 numbers first (half a trillion launches) or the simulator has over 2^24
    /// devices. Seeds `(index + 1) × step` (the old ones) overlapped after one step: device 0's
    /// second session id was device 2's first (issue 47).
    public static func deviceSeed(index: Int) -> UInt64 {
        (UInt64(truncatingIfNeeded: index) &+ 1) &* (1 << 40) &* step
    }

    public mutating func next() -> UInt64 {
        state &+= Self.step
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A random (version 4, RFC 4122 variant) UUID in lowercase 8-4-4-4-12 form.
    mutating func uuid() -> String {
        let high = (next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let low = (next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        // The 36 ASCII bytes written in place (one per LAUNCH; building it from hex strings,
        // a Character array and five parts cost ~1 % of a simulator's CPU in a fleet start).
        return String(unsafeUninitializedCapacity: 36) { out in
            let digits: StaticString = "0123456789abcdef"
            var at = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                let word = nibble < 16 ? high : low
                let value = Int((word >> UInt64((15 - nibble % 16) * 4)) & 0xF)
                out[at] = digits.utf8Start[value]
                at += 1
            }
            return at
        }
    }

    /// A value in [0, 1), uniform: the top 53 bits of the next draw.
    public mutating func unitDraw() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// A value in `0..<bound` (bound > 0).
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// `value` as `digits` lowercase hex digits, zero-padded.
    public static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
