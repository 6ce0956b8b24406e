/// A source of devices (built-in static hosts; the Avahi plugin later). Providers report through
/// the ``DiscoveryProviderSink`` they are started with, from any thread.
public protocol DiscoveryProvider: AnyObject, Sendable {
    /// Short name for logs and explanations (`static`, `avahi`).
    var name: String { get }
    /// Starts reporting. Throw when the provider cannot run at all (the reason is kept and shown
    /// when the device list is empty); later trouble goes to ``DiscoveryProviderSink/failed(_:)``.
    func start(_ sink: DiscoveryProviderSink) async throws(DiscoveryProviderError)
    /// Stops reporting; devices it reported are removed by the manager.
    func stop() async
}

/// Why a provider cannot discover.
public struct DiscoveryProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Where a provider reports. Thread-safe.
public struct DiscoveryProviderSink: Sendable {
    let provider: String
    let criteriaAppIDs: Set<String>
    let onFound: @Sendable (String, CastDevice) -> Void
    let onLost: @Sendable (String, String) -> Void
    let onProblem: @Sendable (String, String?) -> Void

    /// App ids the criteria ask for: a provider that can check support (subtype browse,
    /// GET_APP_AVAILABILITY) fills ``CastDevice/supportedAppIDs`` for these.
    public var appIDs: Set<String> { criteriaAppIDs }

    /// A device appeared or changed.
    public func found(_ device: CastDevice) { onFound(provider, device) }
    /// A device went away.
    public func lost(deviceID: String) { onLost(provider, deviceID) }
    /// Something keeps the provider from finding devices (nil: the problem is over).
    public func problem(_ reason: String?) { onProblem(provider, reason) }
}
