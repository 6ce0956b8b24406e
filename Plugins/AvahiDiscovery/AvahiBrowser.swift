import CAvahi
import CastJSON
import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The `avahi` discovery feature: browses `_googlecast._tcp` (and `_<APPID>._sub._googlecast._tcp`
/// for each app id the criteria ask about) through avahi-daemon, resolves every instance on every
/// interface and protocol (IPv4 and IPv6), and reports devices by their TXT `id`.
///
/// - A device seen through several interfaces or protocols is one device with several addresses
///   (IPv4 first); it is lost when its last instance is removed.
/// - avahi-daemon absent: one problem report, and the client waits (`AVAHI_CLIENT_NO_FAIL`);
///   discovery starts by itself when the daemon appears. Daemon restart: devices are kept while
///   it is away (they may still be reachable), then those not found again within
///   ``restartGraceSeconds`` of its return are reported lost (devices re-announce themselves after
///   a daemon restart: probing takes about a second).
/// - Config: `{"interfaces": ["lo", "veth1"]}` limits results to those interfaces (default: all).
///
/// All avahi callbacks run on avahi's own thread; `stop` takes its lock.
final class AvahiBrowser: DiscoveryPlugin {
    static let serviceTypes = ["_googlecast._tcp"]
    static let serviceType = "_googlecast._tcp"
    static let logClass = "AvahiBrowser"
    static let restartGraceSeconds = 5

    let host: PluginHostServices
    let appIDs: [String]
    let interfaces: Set<String>?
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var browsers: [OpaquePointer] = []
    private var subtypeContexts: [SubtypeContext] = []
    private var resolvers: [InstanceKey: OpaquePointer] = [:]
    private var instances: [InstanceKey: Instance] = [:]
    /// Instance names seen under each app's subtype.
    private var appInstances: [String: Set<String>] = [:]
    private var reported: [String: String] = [:]   // device id → last JSON sent
    /// Device ids to confirm after a daemon restart; unconfirmed ones are lost at ALL_FOR_NOW.
    private var unconfirmed: Set<String> = []
    private var problem: String?
    private var stopped = false
    private var sweepTimeout: OpaquePointer?

    struct InstanceKey: Hashable {
        var interface: Int32
        var proto: Int32
        var name: String
    }

    struct Instance {
        var deviceID: String
        var txt: CastTXTRecord
        var address: String
        var isIPv6: Bool
        var port: Int
        var interfaceName: String
    }

    final class SubtypeContext {
        unowned let owner: AvahiBrowser
        let appID: String
        init(owner: AvahiBrowser, appID: String) {
            self.owner = owner
            self.appID = appID
        }
    }

    init(host: PluginHostServices, config: String, appIDs: String) throws(PluginError) {
        self.host = host
        guard case .object(let o) = try JSONValue.parsePluginInput(config) else { throw PluginError("avahi discovery config must be an object") }
        if let unknown = o.keys.sorted().first(where: { $0 != "interfaces" }) {
            throw PluginError("avahi discovery: unknown config key \"\(unknown)\" (allowed: interfaces)")
        }
        if let list = o["interfaces"] {
            guard let names = list.array?.compactMap(\.string), names.count == list.array?.count, !names.isEmpty else {
                throw PluginError("avahi discovery: interfaces must be a non-empty array of interface names")
            }
            interfaces = Set(names)
        } else {
            interfaces = nil
        }
        let ids = (try JSONValue.parsePluginInput(appIDs)).array?.compactMap(\.string) ?? []
        self.appIDs = ids.filter { id in id.utf8.count <= 32 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) } }
        guard let poll = avahi_threaded_poll_new() else { throw PluginError("avahi: cannot create the poll thread") }
        self.poll = poll
        avahi_threaded_poll_lock(poll)
        var error: Int32 = 0
        client = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, { client, state, context in
            guard let context else { return }
            Unmanaged<AvahiBrowser>.fromOpaque(context).takeUnretainedValue().clientChanged(client, state)
        }, Unmanaged.passUnretained(self).toOpaque(), &error)
        avahi_threaded_poll_unlock(poll)
        guard client != nil else {
            avahi_threaded_poll_free(poll)
            throw PluginError("avahi: cannot create a client: \(String(cString: avahi_strerror(error)))")
        }
        avahi_threaded_poll_start(poll)
        log(.info, "avahi discovery started", ["apps": .string(self.appIDs.joined(separator: ",")),
                                              "interfaces": .string(interfaces?.sorted().joined(separator: ",") ?? "all")])
    }

    func stop() {
        avahi_threaded_poll_stop(poll)
        stopped = true
        if let old = sweepTimeout, let api = avahi_threaded_poll_get(poll) { api.pointee.timeout_free(old) }
        sweepTimeout = nil
        freeBrowsing()
        if let client { avahi_client_free(client) }
        client = nil
        avahi_threaded_poll_free(poll)
        log(.info, "avahi discovery stopped")
    }

    private func log(_ level: PluginLogLevel, _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, PluginFieldValue> = [:]) {
        host.log(level, class: Self.logClass, message(), fields: fields)
    }

    // MARK: Client state (avahi thread)

    private func clientChanged(_ client: OpaquePointer?, _ state: AvahiClientState) {
        if self.client == nil { self.client = client }
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            if problem != nil {
                problem = nil
                host.discoveryProblem(nil)
                log(.info, "avahi-daemon is back: browsing again")
            }
            unconfirmed = Set(reported.keys)
            if !unconfirmed.isEmpty { scheduleSweep() }
            startBrowsing()
        case AVAHI_CLIENT_CONNECTING:
            freeBrowsing()
            report(problem: "avahi-daemon is not running (or D-Bus is not reachable); waiting for it: discovery starts by itself when it appears")
        case AVAHI_CLIENT_FAILURE:
            freeBrowsing()
            let code = avahi_client_errno(client)
            if Int(code) == AVAHI_ERR_DISCONNECTED, !stopped {
                // The daemon went away (stopped or restarted): a new client waits for it (avahi-browse does the same).
                report(problem: "avahi-daemon is not running (or D-Bus is not reachable); waiting for it: discovery starts by itself when it appears")
                reconnect()
                return
            }
            report(problem: "avahi client failed: \(String(cString: avahi_strerror(code)))")
        default:
            break
        }
    }

    /// Replaces a disconnected client (called on the avahi thread, from the old client's callback).
    private func reconnect() {
        if let old = client { avahi_client_free(old) }
        client = nil
        var error: Int32 = 0
        let created = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, { client, state, context in
            guard let context else { return }
            Unmanaged<AvahiBrowser>.fromOpaque(context).takeUnretainedValue().clientChanged(client, state)
        }, Unmanaged.passUnretained(self).toOpaque(), &error)
        if created == nil {
            report(problem: "avahi: cannot create a client: \(String(cString: avahi_strerror(error)))")
        } else {
            client = created
        }
    }

    /// In ``restartGraceSeconds``: devices known before the daemon went away and not found since are lost.
    private func scheduleSweep() {
        guard let api = avahi_threaded_poll_get(poll) else { return }
        if let old = sweepTimeout { api.pointee.timeout_free(old) }
        var when = timeval()
        gettimeofday(&when, nil)
        when.tv_sec += Self.restartGraceSeconds
        sweepTimeout = api.pointee.timeout_new(api, &when, { timeout, context in
            guard let context else { return }
            Unmanaged<AvahiBrowser>.fromOpaque(context).takeUnretainedValue().sweep()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func sweep() {
        if let old = sweepTimeout, let api = avahi_threaded_poll_get(poll) { api.pointee.timeout_free(old) }
        sweepTimeout = nil
        let gone = unconfirmed.filter { id in !instances.values.contains { $0.deviceID == id } }
        unconfirmed = []
        if !gone.isEmpty { log(.info, "\(gone.count) device(s) not seen again since avahi-daemon came back: lost") }
        for id in gone { update(deviceID: id) }
    }

    private func report(problem text: String) {
        guard problem != text else { return }
        problem = text
        host.discoveryProblem(text)
        log(.error, text)
    }

    private func startBrowsing() {
        guard let client else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        if let browser = avahi_service_browser_new(client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                                                   Self.serviceType, nil, AvahiLookupFlags(0), { _, interface, proto, event, name, _, domain, _, context in
            guard let context else { return }
            Unmanaged<AvahiBrowser>.fromOpaque(context).takeUnretainedValue()
                .browsed(interface: interface, proto: proto, event: event, name: name, domain: domain)
        }, me) {
            browsers.append(browser)
        } else {
            report(problem: "avahi: cannot browse \(Self.serviceType): \(String(cString: avahi_strerror(avahi_client_errno(client))))")
        }
        for appID in appIDs {
            let context = SubtypeContext(owner: self, appID: appID)
            subtypeContexts.append(context)
            let type = "_\(appID)._sub.\(Self.serviceType)"
            if let browser = avahi_service_browser_new(client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), type, nil,
                                                       AvahiLookupFlags(0), { _, interface, _, event, name, _, _, _, context in
                guard let context, let name else { return }
                let sub = Unmanaged<SubtypeContext>.fromOpaque(context).takeUnretainedValue()
                sub.owner.subtypeBrowsed(appID: sub.appID, interface: interface, event: event, name: String(cString: name))
            }, Unmanaged.passUnretained(context).toOpaque()) {
                browsers.append(browser)
            }
        }
    }

    private func freeBrowsing() {
        for r in resolvers.values { avahi_service_resolver_free(r) }
        for b in browsers { avahi_service_browser_free(b) }
        resolvers = [:]
        browsers = []
        subtypeContexts = []
        instances = [:]
        appInstances = [:]
    }

    // MARK: Browse and resolve (avahi thread)

    private func interfaceName(_ index: AvahiIfIndex) -> String {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard index >= 0, if_indextoname(UInt32(index), &buffer) != nil else { return "if\(index)" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func allowed(_ interface: AvahiIfIndex) -> Bool {
        guard let interfaces else { return true }
        return interfaces.contains(interfaceName(interface))
    }

    private func browsed(interface: AvahiIfIndex, proto: AvahiProtocol, event: AvahiBrowserEvent, name: UnsafePointer<CChar>?,
                         domain: UnsafePointer<CChar>?) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let client, allowed(interface) else { return }
            let key = InstanceKey(interface: interface, proto: proto, name: String(cString: name))
            guard resolvers[key] == nil else { return }
            let me = Unmanaged.passUnretained(self).toOpaque()
            let resolver = avahi_service_resolver_new(client, interface, proto, name, Self.serviceType, domain, AvahiProtocol(AVAHI_PROTO_UNSPEC),
                                                      AvahiLookupFlags(0), { _, interface, proto, event, name, _, _, _, address, port, txt, _, context in
                guard let context else { return }
                Unmanaged<AvahiBrowser>.fromOpaque(context).takeUnretainedValue()
                    .resolved(interface: interface, proto: proto, event: event, name: name, address: address, port: port, txt: txt)
            }, me)
            if let resolver { resolvers[key] = resolver }
        case AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            let key = InstanceKey(interface: interface, proto: proto, name: String(cString: name))
            if let r = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(r) }
            if let gone = instances.removeValue(forKey: key) { update(deviceID: gone.deviceID) }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            log(.debug, "initial browse complete", ["instances": .int(Int64(instances.count))])
        case AVAHI_BROWSER_FAILURE:
            report(problem: "avahi browse failed: \(String(cString: avahi_strerror(avahi_client_errno(client))))")
        default:
            break
        }
    }

    private func subtypeBrowsed(appID: String, interface: AvahiIfIndex, event: AvahiBrowserEvent, name: String) {
        switch event {
        case AVAHI_BROWSER_NEW: appInstances[appID, default: []].insert(name)
        case AVAHI_BROWSER_REMOVE: appInstances[appID]?.remove(name)
        default: return
        }
        for id in Set(instances.values.filter { $0.txt.friendlyName != nil }.map(\.deviceID)) { update(deviceID: id) }
    }

    private func resolved(interface: AvahiIfIndex, proto: AvahiProtocol, event: AvahiResolverEvent, name: UnsafePointer<CChar>?,
                          address: UnsafePointer<AvahiAddress>?, port: UInt16, txt: UnsafeMutablePointer<AvahiStringList>?) {
        guard let name else { return }
        let key = InstanceKey(interface: interface, proto: proto, name: String(cString: name))
        guard event == AVAHI_RESOLVER_FOUND, let address else {
            log(.warning, "cannot resolve \(key.name) on \(interfaceName(interface)): \(String(cString: avahi_strerror(avahi_client_errno(client))))")
            return
        }
        var entries: [[UInt8]] = []
        var item = txt
        while let node = item {
            let length = Int(avahi_string_list_get_size(node))
            let text = avahi_string_list_get_text(node)!
            entries.append(Array(UnsafeBufferPointer(start: text, count: length)))
            item = avahi_string_list_get_next(node)
        }
        let record = CastTXTRecord(entries: entries)
        guard let id = record.validID else {
            log(.warning, "ignoring \(key.name): its TXT record has no valid id (\(record.id ?? "none"))", ["instance": .string(key.name)])
            return
        }
        var text = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&text, text.count, address)
        var addressText = String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let isIPv6 = address.pointee.proto == AvahiProtocol(AVAHI_PROTO_INET6)
        if isIPv6, addressText.lowercased().hasPrefix("fe80:") { addressText += "%" + interfaceName(interface) }
        let previousID = instances[key]?.deviceID
        instances[key] = Instance(deviceID: id, txt: record, address: addressText, isIPv6: isIPv6, port: Int(port),
                                  interfaceName: interfaceName(interface))
        unconfirmed.remove(id)
        if let previousID, previousID != id { update(deviceID: previousID) }
        update(deviceID: id)
    }

    /// Reports the device's current state: found (when it changed) or lost (no instance left).
    private func update(deviceID: String) {
        let mine = instances.filter { $0.value.deviceID == deviceID }
        guard !mine.isEmpty else {
            if reported.removeValue(forKey: deviceID) != nil {
                host.deviceLost(id: deviceID)
                log(.info, "device lost", ["device": .string(deviceID)])
            }
            return
        }
        let ordered = mine.sorted { a, b in
            if a.value.isIPv6 != b.value.isIPv6 { return !a.value.isIPv6 }
            return (a.value.interfaceName, a.value.address) < (b.value.interfaceName, b.value.address)
        }
        let first = ordered[0].value
        var addresses: [String] = []
        for (_, i) in ordered where !addresses.contains(i.address) { addresses.append(i.address) }
        let names = Set(mine.keys.map(\.name))
        let apps = appIDs.filter { !(appInstances[$0] ?? []).isDisjoint(with: names) }
        var object: [String: JSONValue] = [
            "id": .string(deviceID), "name": .string(first.txt.friendlyName ?? ordered[0].key.name), "host": .string(first.address),
            "port": .int(Int64(first.port)), "addresses": .array(addresses.map { .string($0) }),
            "service_type": .string(Self.serviceType), "interface": .string(first.interfaceName),
            "app_ids": .array(apps.map { .string($0) }),
        ]
        if let v = first.txt.model { object["model"] = .string(v) }
        if let v = first.txt.capabilities { object["capabilities"] = .int(Int64(v)) }
        if let v = first.txt.statusText { object["status_text"] = .string(v) }
        if let v = first.txt.busy { object["busy"] = .bool(v) }
        if let v = first.txt.version { object["version"] = .string(v) }
        if let v = first.txt.iconPath { object["icon_path"] = .string(v) }
        // Keys sorted: the same text for the same report, so an unchanged device is not reported again.
        let json = JSONValue.object(JSONObject(object.sorted { $0.key < $1.key })).serialized()
        guard reported[deviceID] != json else { return }
        let isNew = reported[deviceID] == nil
        reported[deviceID] = json
        host.deviceFound(json: json)
        log(isNew ? .info : .debug, isNew ? "device found" : "device updated",
            ["device": .string(deviceID), "name": .string(first.txt.friendlyName ?? ""), "address": .string(first.address)])
    }
}

enum AvahiDiscoveryPlugin: CastlinePlugin {
    static let id = "avahi-discovery"
    static let version = "1.0.0"
    static let summary = "Cast device discovery through avahi-daemon (mDNS/DNS-SD, IPv4 and IPv6)"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [.discovery(AvahiBrowser.self, id: "avahi")]
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(AvahiDiscoveryPlugin.self) }
