import CastCore
import CastPluginHost
import CastSender
import Synchronization

/// Binds one channel instance (the host's ``PluginChannel``) to a ``CastSession``: its namespaces
/// become ``GenericChannel``s whose handler is the instance's delivery (no stream, no task
/// between), the plugin's sends are queued on the session's connection in the order they are made
/// (``GenericChannel/enqueue(text:to:completion:)``), and the session's updates become the plugin's
/// app events (``ChannelAppWatch``, read by one task until ``detach()``). Thread-safe.
package final class SessionChannelBinding: PluginChannelSession {
    private let session: CastSession
    /// Set by ``attach(namespaces:to:)``; the channels stay after ``detach()`` (a send from the
    /// plugin's `close` still goes through them, as before the split).
    private let bound = Mutex<(channels: [GenericChannel], endpoint: PluginChannelEndpoint)?>(nil)
    private let watcher = Mutex<(task: Task<Void, Never>?, detached: Bool)>((nil, false))

    package init(session: CastSession) {
        self.session = session
    }

    package var deviceID: String {
        get async { await session.device.id }
    }

    package func attach(namespaces: [String], to endpoint: PluginChannelEndpoint) async -> ApplicationInfo? {
        let deliver = endpoint.deliver
        let channels = namespaces.compactMap { CastNamespace(rawValue: $0) }.map { namespace in
            GenericChannel(namespace: namespace) { message in
                switch message.payload {
                case .string(let text): deliver(namespace.rawValue, message.source, text)
                default: deliver(namespace.rawValue, message.source, nil)
                }
            }
        }
        bound.withLock { $0 = (channels, endpoint) }
        let deviceID = await session.device.id
        let app = await session.application
        // Subscribed before the plugin opens: a change while it opens is told once it has.
        let updates = session.updates()
        for channel in channels { await session.add(channel) }
        let watch = ChannelAppWatch(deviceID: deviceID, namespaces: namespaces, app: app)
        let task = Task {
            var watch = watch
            for await update in updates {
                for notice in watch.apply(update) { endpoint.appEvent(notice) }
            }
        }
        let started = watcher.withLock { w -> Bool in
            guard !w.detached else { return false }
            w.task = task
            return true
        }
        if !started { task.cancel() }
        return app
    }

    package func send(namespace: String, destination: String?, payload: String) -> Int32 {
        guard
            let (channel, endpoint) = bound.withLock({ b in
                b.flatMap { b in b.channels.first(where: { $0.namespace.rawValue == namespace }).map { ($0, b.endpoint) } }
            })
        else { return HostServices.undeclared }
        switch PluginChannel.route(destination: destination, appTransportID: session.currentAppTransportID, sessionEnded: session.hasEnded) {
        case .success(let route):
            // Queued on the connection now, in the order of the calls; a send the connection
            // then fails is reported (the ABI's CASTLINE_OK: queued).
            do {
                try channel.enqueue(text: payload, to: route == .app ? .app : .receiver) { failure in
                    if let failure { endpoint.failed(namespace, failure) }
                }
            } catch {
                endpoint.failed(namespace, error)
            }
            return HostServices.ok
        case .failure(let refusal):
            endpoint.refused(namespace, refusal)
            return refusal.status
        }
    }

    package func detach() async {
        let (first, task) = watcher.withLock { w in
            defer { w.detached = true }
            return (!w.detached, w.task)
        }
        guard first else { return }
        task?.cancel()
        for channel in bound.withLock({ $0?.channels ?? [] }) { await session.remove(channel) }
    }
}
