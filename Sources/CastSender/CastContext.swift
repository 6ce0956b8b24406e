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

    private static let sharedInstance = Mutex<CastContext?>(nil)

    /// Creates the managers; discovery starts unless ``CastOptions/disableDiscoveryAutostart``
    /// (call ``start()`` once providers are added, or let autostart do it when they are given here).
    public init(options: CastOptions, providers: [any DiscoveryProvider] = [], threads: Int = SessionManager.defaultThreads) async {
        self.options = options
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, min(threads, 64)))
        self.group = group
        discoveryManager = DiscoveryManager(criteria: options.discoveryCriteria, logSystem: options.logSystem)
        sessionManager = SessionManager(options: options, group: group)
        for provider in providers { await discoveryManager.add(provider) }
        let discovery = discoveryManager
        await sessionManager.setTransferCandidates { await discovery.devices }
        if !options.disableDiscoveryAutostart { await discoveryManager.start() }
        Logger(class: "CastContext", system: options.logSystem).info("context ready: app \(options.receiverAppID), \(providers.count) provider(s), discovery \(options.disableDiscoveryAutostart ? "manual" : "started")", [
            "appId": .string(options.receiverAppID),
        ])
    }

    /// Starts discovery (when autostart is disabled).
    public func start() async { await discoveryManager.start() }

    /// Stops discovery, ends sessions (leaving apps running and resume records in place unless
    /// `stopCasting`) and the event loops.
    public func shutdown(stopCasting: Bool = false) async {
        await discoveryManager.stop()
        await sessionManager.shutdown(stopCasting: stopCasting)
        try? await group.shutdownGracefully()
    }

    /// The shared context, once ``setShared(_:)`` was called.
    public static var shared: CastContext? { sharedInstance.withLock { $0 } }

    public static func setShared(_ context: CastContext?) { sharedInstance.withLock { $0 = context } }
}
