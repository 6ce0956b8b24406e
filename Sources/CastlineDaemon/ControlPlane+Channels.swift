import CastCore
import CastLogging
import CastProtocol
import CastSender
import CastlineLogs

/// Channel plugins as the control plane reaches them: which loaded feature declares a namespace,
/// and a handle on one opened on a device's session. (`castline run` adapts its plugin host.)
package protocol ChannelPlugins: Sendable {
    /// The loaded channel feature that declares `namespace` (also while it is disabled or
    /// restarting), with why it cannot be used now (nil: it can); nil when none declares it.
    func owner(ofNamespace namespace: String) -> (feature: String, unavailable: String?)?
    /// Opens `feature` on `session`.
    func open(feature: String, on session: CastSession) async throws -> any ChannelHandle
    /// Every loaded plugin's state, for `GET /v1/plugins` and `/metrics`.
    func states() -> [PluginRunState]
    /// Plugins disabled at run time get another chance (SIGHUP); their ids.
    func reenableDisabled() -> [String]
}

/// A loaded plugin as the hub shows it.
package struct PluginRunState: Sendable, Equatable {
    package var id: String
    package var version: String
    package var path: String
    /// `loaded`, `isolated`, `restarting` or `disabled`.
    package var state: String
    package var reason: String?
    package var restarts: Int
    package var helperPID: Int32?
    package var features: [String]

    package init(id: String, version: String, path: String, state: String, reason: String?, restarts: Int, helperPID: Int32?, features: [String]) {
        self.id = id
        self.version = version
        self.path = path
        self.state = state
        self.reason = reason
        self.restarts = restarts
        self.helperPID = helperPID
        self.features = features
    }

    package var json: JSONValue {
        var o: JSONObject = ["id": .string(id), "version": .string(version), "path": .string(path), "state": .string(state),
                             "restarts": .int(Int64(restarts)), "features": .array(features.map { .string($0) })]
        if let reason { o.set("reason", .string(reason)) }
        if let helperPID { o.set("helperPid", .int(Int64(helperPID))) }
        return .object(o)
    }
}

/// A channel plugin opened on one device: it takes command objects and answers each one.
package protocol ChannelHandle: Sendable {
    func command(_ object: JSONValue, timeout: Double) async -> Result<JSONValue, ControlError>
    /// Closed for good (after an overrun): a new one must be opened.
    var isClosed: Bool { get }
    func close() async
    /// `observer` hears the app's messages on the plugin's namespaces too (`channel listen`).
    func observeMessages(_ observer: @escaping @Sendable (_ namespace: String, _ source: String, _ payload: String) -> Void)
}

/// Custom namespaces and log rules through the control plane.
extension ControlPlane {
    // MARK: Channels

    /// A message (or, with `wait`, a request) to `namespace` on the device: through the channel
    /// plugin that declares the namespace, or a plain channel when `channels.allowed_namespaces`
    /// lists it; anything else is refused.
    func channel(_ reference: String, namespace: String, _ arguments: ChannelArguments) async throws(ControlError) -> JSONValue {
        guard namespace.hasPrefix("urn:x-cast:"), namespace.utf8.count <= 128 else {
            throw ControlError.usage("bad_namespace", "\"\(namespace)\" is not a custom namespace (urn:x-cast:…, at most 128 bytes)")
        }
        let (entry, link) = try await registry.link(reference)
        let id = entry.device.id
        if let app = arguments.app, await link.application?.appID != app {
            _ = try await Self.launch(app, on: link, device: entry.device)
        }
        if let (feature, unavailable) = pluginChannels.owner(ofNamespace: namespace) {
            // A plugin's namespace never falls back to the plain path: while the plugin cannot
            // be used, its namespace answers 503.
            if let unavailable { throw Self.pluginUnavailable(feature, namespace: namespace, unavailable) }
            guard arguments.message != nil || arguments.listen else {
                throw ControlError(.conflict, "namespace_owned_by_plugin", "channel plugin \(feature) owns \(namespace): its messages go to the plugin")
            }
            let handle = try await pluginChannels.handle(feature: feature, device: id, deviceName: entry.device.friendlyName, link: link)
            guard let message = arguments.message else {
                // Listening beside the plugin: the app's messages reach the plugin and become
                // channel events too (once per opened channel).
                if await pluginChannels.markObserved(feature: feature, device: id) {
                    let events = daemon.events
                    handle.observeMessages { namespace, source, payload in
                        Self.emitAppMessage(events, device: id, namespace: namespace, source: source, text: payload, via: feature)
                    }
                }
                return ["namespace": .string(namespace), "via": .string(feature), "listening": true]
            }
            let object: JSONValue = if case .string(let text) = message { ["text": .string(text)] } else { message }
            switch await handle.command(object, timeout: arguments.timeout) {
            case .success(let reply): return ["namespace": .string(namespace), "via": .string(feature), "reply": reply]
            case .failure(let error): throw error
            }
        }
        guard allowedNamespaces.contains(namespace) else {
            throw ControlError(.forbidden, "namespace_not_allowed",
                               "no channel plugin declares \(namespace), and channels.allowed_namespaces does not list it: add it there to use it")
        }
        let channel: GenericChannel
        if let open = channels[id]?[namespace], await link.hasChannel(open) {
            channel = open
        } else {
            // The app's messages on it are channel events (`castline channel listen`).
            let events = daemon.events
            channel = GenericChannel(namespace: CastNamespace(namespace)) { message in
                switch message.payload {
                case .string(let text): Self.emitAppMessage(events, device: id, namespace: namespace, source: message.source, text: text)
                case .binary(let bytes):
                    Self.emitAppMessage(events, device: id, namespace: namespace, source: message.source, body: ["binary": .int(Int64(bytes.count))])
                }
            }
            await link.add(channel)
            channels[id, default: [:]][namespace] = channel
        }
        guard let message = arguments.message else {
            return ["namespace": .string(namespace), "via": .string("generic"), "listening": true]
        }
        if arguments.wait {
            guard case .object(let object) = message else {
                throw ControlError.usage("request_not_object", "a request (\"wait\": true) needs a JSON object message (it gets a requestId)")
            }
            switch await channel.request(object, timeout: arguments.timeout).result {
            case .success(let reply): return ["namespace": .string(namespace), "via": .string("generic"), "reply": reply]
            case .failure(let error):
                throw ControlError(error.isTimeout ? .unavailable : .refused, "channel_request_failed", "\(entry.device.friendlyName): \(error)")
            }
        }
        do {
            switch message {
            case .string(let text): try await channel.send(text: text)
            default: try await channel.send(text: message.serialized())
            }
        } catch {
            throw ControlError(.unavailable, "channel_send_failed", "\(entry.device.friendlyName): \(error)")
        }
        return ["namespace": .string(namespace), "via": .string("generic"), "sent": true]
    }

    /// One message the app sent on a custom namespace, as the channel event `castline channel
    /// listen` prints: its JSON, or the text when it is not JSON; `via` the plugin it also reached.
    static func emitAppMessage(_ events: HubEvents, device id: String, namespace: String, source: String, text: String, via: String? = nil) {
        emitAppMessage(events, device: id, namespace: namespace, source: source, body: (try? JSONValue.parse(text)) ?? .string(text), via: via)
    }

    static func emitAppMessage(_ events: HubEvents, device id: String, namespace: String, source: String, body: JSONValue, via: String? = nil) {
        var fields: [String: JSONValue] = ["namespace": .string(namespace), "source": .string(source), "message": body]
        if let via { fields["via"] = .string(via) }
        events.emit(.channel, "message", device: id, fields)
    }

    /// 503 `plugin_unavailable`: the plugin that owns `namespace` is disabled or restarting.
    static func pluginUnavailable(_ feature: String, namespace: String, _ reason: String) -> ControlError {
        ControlError(.unavailable, "plugin_unavailable", "channel plugin \(feature) owns \(namespace) and is unavailable: \(reason) "
                     + "(a restarting plugin is back within seconds; SIGHUP retries a disabled one)")
    }

    // MARK: Logging

    func logging() async -> JSONValue {
        let layers = await daemon.logLayers
        let sinks: [JSONValue] = logSystem.sinkStatistics.map {
            ["name": .string($0.name), "queued": .int(Int64($0.queued)), "delivered": .int(Int64($0.delivered)),
             "dropped": .int(Int64($0.dropped))]
        }
        return ["rules": .string(logSystem.filter.ruleString),
                "layers": .array(layers.layers.map { ["source": .string($0.source), "rules": .string($0.rules)] }),
                "sinks": .array(sinks)]
    }

    func explain(_ className: String, function: String) async throws(ControlError) -> JSONValue {
        let layers = await daemon.logLayers
        do {
            let explanation = try LevelExplanation.explain(className: className, function: function, layers: layers.layers,
                                                           defaultMinimum: layers.defaultMinimum)
            guard case .object(var object) = explanation.json else { return explanation.json }
            object.set("text", .string(explanation.text))
            return .object(object)
        } catch {
            throw ControlError(.internal, "bad_layer", "\(error)")
        }
    }
}

extension CastRequestError {
    var isTimeout: Bool { if case .timedOut = self { true } else { false } }
}
