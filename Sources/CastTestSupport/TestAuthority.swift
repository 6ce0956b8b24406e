import SystemCrypto

/// Simulator certificate authorities shared by the test suites: RSA-2048 generation is slow,
/// and generating it per simulator starved the event loops of tests running beside it.
package enum TestAuthority {
    package static let main: SimulatorAuthority = make()
    /// A second, unrelated authority (a "foreign root").
    package static let other: SimulatorAuthority = make()

    private static func make() -> SimulatorAuthority {
        do { return try SimulatorAuthority.generate() } catch { fatalError("cannot create a test authority: \(error)") }
    }
}
