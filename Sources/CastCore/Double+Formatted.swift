extension Double {
    /// `5` or `2.5`: a number of seconds (or any quantity) as a message says it.
    public var formatted: String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self) }

    /// Rounded to two decimals (23.976 → 23.98), for people.
    public var rounded2: Double { (self * 100).rounded() / 100 }
}
