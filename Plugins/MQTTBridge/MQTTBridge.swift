import CastJSON
import MQTTBridgeCore
import CastPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The MQTT bridge: the agent's devices and jobs as retained state on the broker, their `set`
/// topics as commands through the daemon's control API, the hub's events on `…/events`, and Home
/// Assistant discovery (docs/fleet.md). Every command is an API request (``CommandTranslator``)
/// run by the daemon's control plane; the bridge keeps only what it published, to publish it
/// again after a reconnect.
///
/// Threads: libmosquitto's callbacks arrive on the client's thread, replies, events and timers on
/// the instance's queue; the shared state is behind one lock.
final class MQTTBridge: BridgePlugin, @unchecked Sendable {
    static let logClass = "MQTTBridge"
    /// Results kept while the broker is away (sent after the reconnect); the oldest go first.
    static let maxQueuedResults = 1_024

    private let host: PluginHostServices
    private let scheme: TopicScheme?
    private let homeAssistant: Bool
    /// `mqtt.device_unavailable_after`.
    private let unavailableAfter: Double
    private var client: MosquittoClient?
    private let state = Mutex(State())

    struct DeviceInfo {
        var id: String
        var topicID: String
        var name: String
        var model: String?
        var owner: String?
        var hasScreen = false
    }

    enum Pending {
        case deviceList
        case jobList
        case deviceState(String)
        case jobState(String)
        case command(resultTopic: String, correlation: JSONValue)
        case assign(resultTopic: String, correlation: JSONValue, device: String, job: String)
    }

    struct State {
        var nextRequest: UInt64 = 0
        var pending: [UInt64: Pending] = [:]
        var devices: [String: DeviceInfo] = [:]
        var byTopic: [String: String] = [:]
        var jobs: [String] = []
        var retained: [String: [UInt8]] = [:]
        var coalescer = StateCoalescer()
        var limiter = ProblemLimiter()
        var queuedResults: [(topic: String, payload: [UInt8])] = []
    }

    init(host: PluginHostServices, config: String) throws(PluginError) {
        self.host = host
        guard let settings = try BridgeSettings.parse(config, noDelayVariable: getenv("CASTLINE_MQTT_TCP_NODELAY").map { String(cString: $0) }) else {
            scheme = nil
            homeAssistant = false
            unavailableAfter = 15
            host.log(.info, class: Self.logClass, "no mqtt: section: the MQTT bridge stays idle")
            return
        }
        guard host.offersBridgeServices else { throw PluginError("this castline offers no bridge services (plugin ABI 1.1 needed)") }
        let scheme = TopicScheme(base: settings.baseTopic, agent: settings.agent, discoveryPrefix: settings.discoveryPrefix)
        self.scheme = scheme
        homeAssistant = settings.homeAssistant
        unavailableAfter = settings.deviceUnavailableAfter
        let options = MosquittoClient.Options(
            host: settings.host, port: settings.port, clientID: Self.clientID(agent: settings.agent, username: settings.username),
            keepalive: settings.keepalive,
            username: settings.username, passwordFile: settings.passwordFile, tls: settings.tls, caFile: settings.caFile,
            willTopic: scheme.status, willPayload: "offline", tcpNoDelay: settings.tcpNoDelay)
        let client = MosquittoClient(options: options, handlers: MosquittoClient.Handlers(
            connected: { [weak self] in self?.connected() },
            disconnected: { [weak self] reason in self?.disconnected(reason) },
            message: { [weak self] topic, payload, size, retained in self?.received(topic, payload, size: size, retained: retained) },
            problem: { [weak self] text in self?.problem(source: "broker", text) }))
        guard let client else { throw PluginError("libmosquitto could not create a client") }
        self.client = client
        guard host.subscribeEvents(kinds: ["device", "media", "session", "job"]) == 0 else {
            throw PluginError("the host refused the event subscription")
        }
        request(["method": "GET", "path": "/v1/devices"], .deviceList)
        request(["method": "GET", "path": "/v1/jobs"], .jobList)
        guard client.start() else { throw PluginError("cannot start the MQTT thread") }
        host.log(.info, class: Self.logClass, "MQTT bridge for agent \(settings.agent) to \(settings.tls ? "mqtts" : "mqtt")://\(settings.host):\(settings.port)",
                 fields: ["agent": .string(settings.agent), "broker": .string("\(settings.host):\(settings.port)"),
                          "baseTopic": .string(settings.baseTopic), "user": .string(settings.username ?? ""),
                          "tcpNoDelay": .bool(settings.tcpNoDelay)])
    }

    func stop() {
        guard let scheme else { return }
        client?.stop(finalStatus: (scheme.status, "offline"))
        host.log(.info, class: Self.logClass, "MQTT bridge stopped (status offline)")
    }

    // MARK: Broker

    private func connected() {
        guard let scheme, let client else { return }
        host.log(.info, class: Self.logClass, "connected to the broker; publishing the retained state")
        for pattern in scheme.subscriptions where !client.subscribe(pattern, qos: 1) {
            problem(source: "broker", "cannot subscribe to \(pattern)")
        }
        client.publish(scheme.status, Array("online".utf8), qos: 1, retain: true)
        if homeAssistant {
            let agent = HomeAssistantDiscovery.agent(scheme: scheme, version: MQTTBridgePlugin.version)
            publishRetained(agent.topic, Array(agent.payload.serialized().utf8))
        }
        let (retained, results) = state.withLock { s -> ([String: [UInt8]], [(topic: String, payload: [UInt8])]) in
            defer { s.queuedResults = [] }
            s.coalescer.reset()
            return (s.retained, s.queuedResults)
        }
        for (topic, payload) in retained { client.publish(topic, payload, qos: 1, retain: true) }
        for result in results { client.publish(result.topic, result.payload, qos: 1, retain: false) }
        // And fresh state, in case something changed while the broker was away.
        request(["method": "GET", "path": "/v1/devices"], .deviceList)
        request(["method": "GET", "path": "/v1/jobs"], .jobList)
    }

    private func disconnected(_ reason: String) {
        problem(source: "broker", "connection to the broker lost: \(reason); reconnecting with backoff")
    }

    private func publishRetained(_ topic: String, _ payload: [UInt8]) {
        let changed = state.withLock { s -> Bool in
            if payload.isEmpty {
                return s.retained.removeValue(forKey: topic) != nil
            }
            guard s.retained[topic] != payload else { return false }
            s.retained[topic] = payload
            return true
        }
        guard changed, let client, client.connected else { return }
        client.publish(topic, payload, qos: 1, retain: true)
    }

    private func publishResult(_ topic: String, _ result: JSONValue) {
        publishOrQueue(topic, Array(result.serialized().utf8))
        // A device command that failed fires Home Assistant's "command failed" trigger.
        if let scheme, let topicID = scheme.device(ofResult: topic), let trigger = DeviceSignals.trigger(result: result) {
            publishOrQueue(scheme.deviceTrigger(topicID), Array(trigger.utf8))
        }
    }

    /// A message that is not retained: sent now, or kept until the broker is back.
    private func publishOrQueue(_ topic: String, _ payload: [UInt8]) {
        if let client, client.connected, client.publish(topic, payload, qos: 1, retain: false) { return }
        state.withLock { s in
            if s.queuedResults.count >= Self.maxQueuedResults { s.queuedResults.removeFirst() }
            s.queuedResults.append((topic, payload))
        }
    }

    // MARK: Commands

    /// The MQTT client id: the username when there is one (what a broker with
    /// `use_username_as_clientid` enforces, so no other credentials can take the agent's id),
    /// else `castline-<agent>`.
    static func clientID(agent: String, username: String?) -> String {
        if let username, !username.isEmpty { return username }
        return "castline-\(agent)"
    }

    private func received(_ topic: String, _ payload: [UInt8], size: Int, retained: Bool) {
        guard let scheme, let target = scheme.target(of: topic) else { return }
        // A retained command would run again at every reconnect (and race discovery at start):
        // commands are never taken from the retained store.
        if retained {
            problem(source: "retained", "retained command on \(topic) ignored: publish commands without the retain flag "
                    + "(and clear it: mosquitto_pub -r -n -t '\(topic)')")
            return
        }
        let (correlation, object, refusal) = CommandTranslator.parse(payload, size: size, now: Double(time(nil)))
        let resultTopic: String
        let plan: Result<CommandTranslator.Plan, CommandTranslator.Refusal>
        switch target {
        case .device(let topicID):
            resultTopic = scheme.deviceResult(topicID)
            if let refusal { plan = .failure(refusal) } else if let deviceID = state.withLock({ $0.byTopic[topicID] }) {
                plan = CommandTranslator.device(deviceID, object!)
            } else {
                plan = .failure(CommandTranslator.Refusal(code: "unknown_device", message: "agent \(scheme.agent) has no device \(topicID)"))
            }
        case .job(let name):
            resultTopic = scheme.jobResult(name)
            plan = refusal.map { .failure($0) } ?? CommandTranslator.job(name, object!)
        }
        switch plan {
        case .failure(let refusal):
            // One source for every command topic: a flood over many topics is one line a minute.
            problem(source: "commands", "command refused on \(topic): \(refusal.code): \(refusal.message)")
            publishResult(resultTopic, CommandTranslator.result(correlation: correlation, status: 400, body: refusal.json))
        case .success(.request(let request)):
            if !self.request(request, .command(resultTopic: resultTopic, correlation: correlation)) {
                publishResult(resultTopic, CommandTranslator.result(correlation: correlation, status: 503,
                    body: ["error": ["code": "bridge_refused", "message": "castline refused the request (it is stopping?)"]]))
            }
        case .success(.assignJob(let job, let device)):
            request(["method": "GET", "path": .string("/v1/jobs/\(CommandTranslator.percentEncoded(job))")],
                    .assign(resultTopic: resultTopic, correlation: correlation, device: device, job: job))
        }
    }

    /// Sends one API request; false when the host refused it.
    @discardableResult
    private func request(_ request: JSONValue, _ pending: Pending) -> Bool {
        let id = state.withLock { s -> UInt64 in
            s.nextRequest += 1
            s.pending[s.nextRequest] = pending
            return s.nextRequest
        }
        guard host.controlRequest(id: id, json: request.serialized()) == 0 else {
            _ = state.withLock { $0.pending.removeValue(forKey: id) }
            return false
        }
        return true
    }

    func didReply(request id: UInt64, status: Int, json: String) {
        guard let scheme, let pending = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        let body = (try? JSONValue.parse(json)) ?? .null
        let ok = (200..<300).contains(status)
        switch pending {
        case .deviceList:
            for device in body["devices"]?.array ?? [] {
                guard let id = device["id"]?.string else { continue }
                note(device: id, json: device)
                changed(device: id)
            }
        case .jobList:
            let names = (body["jobs"]?.array ?? []).compactMap { $0["name"]?.string }.sorted()
            let devices = state.withLock { s -> [DeviceInfo]? in
                guard s.jobs != names else { return nil }
                s.jobs = names
                return Array(s.devices.values)
            }
            for name in names { request(["method": "GET", "path": .string("/v1/jobs/\(CommandTranslator.percentEncoded(name))")], .jobState(name)) }
            for device in devices ?? [] { discover(device) }
        case .deviceState(let device):
            if ok {
                note(device: device, json: body)
                if let info = state.withLock({ $0.devices[device] }) {
                    publishRetained(scheme.deviceState(info.topicID), Array(body.serialized().utf8))
                    if let availability = DeviceSignals.availability(state: body, unavailableAfter: unavailableAfter) {
                        publishRetained(scheme.deviceAvailability(info.topicID), Array(availability.payload.utf8))
                        if case .onlineFor(let seconds) = availability {
                            // Look again when the bound has passed: offline then, if still down.
                            _ = host.startTimer(delayMs: UInt64((seconds * 1000).rounded(.up)) + 1) { [weak self] in self?.changed(device: device) }
                        }
                    }
                    let jobs = state.withLock { $0.jobs }
                    publishRetained(scheme.deviceJob(info.topicID), Array(HomeAssistantDiscovery.activeJob(owner: info.owner, jobs: jobs).utf8))
                }
            }
            act(device, state.withLock { $0.coalescer.fetched(device, now: Self.now()) })
        case .jobState(let name):
            let topic = scheme.jobState(TopicScheme.level(name))
            if ok { publishRetained(topic, Array(body.serialized().utf8)) } else if status == 404 {
                publishRetained(topic, [])
                if let client, client.connected { client.publish(topic, [], qos: 1, retain: true) }
            }
        case .command(let resultTopic, let correlation):
            publishResult(resultTopic, CommandTranslator.result(correlation: correlation, status: status, body: body))
        case .assign(let resultTopic, let correlation, let device, let job):
            switch ok ? CommandTranslator.assignment(of: device, toJob: job, from: body) : .failure(CommandTranslator.Refusal(
                code: body["error"]?["code"]?.string ?? "job_unavailable", message: body["error"]?["message"]?.string ?? "job \(job): status \(status)")) {
            case .success(let put): request(put, .command(resultTopic: resultTopic, correlation: correlation))
            case .failure(let refusal):
                publishResult(resultTopic, CommandTranslator.result(correlation: correlation, status: ok ? 400 : status, body: refusal.json))
            }
        }
    }

    // MARK: Events and state

    func didReceive(event json: String) {
        guard let scheme, let event = try? JSONValue.parse(json) else { return }
        if let client, client.connected { client.publish(scheme.events, Array(json.utf8), qos: 0, retain: false) }
        if let (device, trigger) = DeviceSignals.trigger(event: event), let info = state.withLock({ $0.devices[device] }) {
            publishOrQueue(scheme.deviceTrigger(info.topicID), Array(trigger.utf8))
        }
        if let device = event["device"]?.string { changed(device: device) }
        if event["kind"]?.string == "job", let job = event["job"]?.string {
            request(["method": "GET", "path": .string("/v1/jobs/\(CommandTranslator.percentEncoded(job))")], .jobState(job))
            if ["added", "removed"].contains(event["type"]?.string ?? "") { request(["method": "GET", "path": "/v1/jobs"], .jobList) }
        }
    }

    /// Records a device's name, model and owner from an API object; announces a new one to Home
    /// Assistant, and again when its name or model changed (the registry learns a model from the
    /// device after its first listing).
    private func note(device id: String, json: JSONValue) {
        let (info, announce) = state.withLock { s -> (DeviceInfo, Bool) in
            let old = s.devices[id]
            var info = old ?? DeviceInfo(id: id, topicID: TopicScheme.level(id), name: id)
            if let name = json["device"]?.string { info.name = name }
            if let model = json["model"]?.string { info.model = model }
            info.owner = json["owner"]?.string
            if json["screen"] != nil { info.hasScreen = true }
            s.devices[id] = info
            s.byTopic[info.topicID] = id
            return (info, old == nil || old?.name != info.name || old?.model != info.model || old?.hasScreen != info.hasScreen)
        }
        if announce { discover(info) }
    }

    private func discover(_ device: DeviceInfo) {
        guard homeAssistant, let scheme else { return }
        let jobs = state.withLock { $0.jobs }
        for entity in HomeAssistantDiscovery.entities(scheme: scheme, deviceID: device.id, topicID: device.topicID, name: device.name,
                                                      model: device.model, jobs: jobs, version: MQTTBridgePlugin.version, hasScreen: device.hasScreen) {
            publishRetained(entity.topic, Array(entity.payload.serialized().utf8))
        }
    }

    private func changed(device: String) {
        act(device, state.withLock { $0.coalescer.changed(device, now: Self.now()) })
    }

    private func act(_ device: String, _ action: StateCoalescer.Action) {
        switch action {
        case .none: break
        case .fetchNow:
            request(["method": "GET", "path": .string("/v1/devices/\(CommandTranslator.percentEncoded(device))")], .deviceState(device))
        case .fetchAt(let time):
            let delay = UInt64(max(0, (time - Self.now()) * 1000).rounded(.up))
            _ = host.startTimer(delayMs: max(delay, 1)) { [weak self] in
                guard let self else { return }
                self.act(device, self.state.withLock { $0.coalescer.due(device, now: Self.now()) })
            }
        }
    }

    // MARK: Logging

    /// Logs a problem at most once a minute per source (a topic, the broker).
    private func problem(source: String, _ text: String) {
        guard let suppressed = state.withLock({ $0.limiter.shouldLog(source: source, now: Self.now()) }) else { return }
        let summary = suppressed > 0 ? " (\(suppressed) more like it since the last report, not logged)" : ""
        host.log(.warning, class: Self.logClass, text + summary, fields: ["source": .string(source), "suppressed": .int(Int64(suppressed))])
    }

    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
