import CastLogging
import NIOCore
import NIOPosix
import Synchronization

/// The entry point (GCKCastContext): owns the options, the event loops, the discovery manager
/// and the session manager. Create one per process (``shared`` is a convenience, not required).
public final class CastContext: Sendable {
    public let options: CastOptions
    public let discoveryManager: DiscoveryManager
    public let sessionManager: SessionManager
    /// The event loops connections and probes run on.
    public let group: EventLoopGroup
    private let ownsGroup: Bool

    private static let sharedInstance = Mutex<CastContext?>(nil)

    /// Creates the managers on event loops of its own; discovery starts unless
    /// ``CastOptions/disableDiscoveryAutostart`` (call ``start()`` once providers are added, or
    /// let autostart do it when they are given here).
    public convenience init(options: CastOptions, providers: [any DiscoveryProvider] = [], threads: Int = SessionManager.defaultThreads) async {
        self.init(options: options, group: MultiThreadedEventLoopGroup(numberOfThreads: max(1, min(threads, 64))), ownsGroup: true)
        for provider in providers { await discoveryManager.add(provider) }
        if !options.disableDiscoveryAutostart { await discoveryManager.start() }
        Logger(class: "CastContext", system: options.logSystem).info("context ready: app \(options.receiverAppID), \(providers.count) provider(s), discovery \(options.disableDiscoveryAutostart ? "manual" : "started")", [
            "appId": .string(options.receiverAppID),
        ])
    }

    /// Creates the managers on `group`, which the caller owns and shuts down after
    /// ``shutdown(stopCasting:)``. Discovery starts with ``start()``, once providers are added.
    public convenience init(options: CastOptions, group: EventLoopGroup) {
        self.init(options: options, group: group, ownsGroup: false)
    }

    private init(options: CastOptions, group: EventLoopGroup, ownsGroup: Bool) {
        self.options = options
        self.group = group
        self.ownsGroup = ownsGroup
        let discovery = DiscoveryManager(criteria: options.discoveryCriteria, logSystem: options.logSystem)
        discoveryManager = discovery
        // A session whose app stopped looks for it on the devices discovery knows (a transfer).
        sessionManager = SessionManager(options: options, group: group, transferCandidates: { await discovery.devices })
    }

    /// Starts discovery (when autostart is disabled).
    public func start() async { await discoveryManager.start() }

    /// Stops discovery, ends sessions (leaving apps running and resume records in place unless
    /// `stopCasting`) and, when the context owns them, the event loops.
    public func shutdown(stopCasting: Bool = false) async {
        await discoveryManager.stop()
        await sessionManager.shutdown(stopCasting: stopCasting)
        if ownsGroup { try? await group.shutdownGracefully() }
    }

    /// The shared context, once ``setShared(_:)`` was called.
    public static var shared: CastContext? { sharedInstance.withLock { $0 } }

    public static func setShared(_ context: CastContext?) { sharedInstance.withLock { $0 = context } }
}
