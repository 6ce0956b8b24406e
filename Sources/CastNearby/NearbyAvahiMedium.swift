import CAvahi
import CastLogging
import Dispatch
import Glibc
import Synchronization

/// Nearby messages over the LAN: each publication is a DNS-SD service instance of
/// `_castline-nearby._udp` registered through avahi-daemon (PTR, SRV and the TXT record that holds
/// the message, all with a TTL of ``NearbyDNSRecords/recordTTL`` seconds); browsing resolves
/// every instance on every interface and protocol.
///
/// - Lost: a withdrawn publication (or one whose process died: avahi-daemon drops a dead
///   client's records) leaves with mDNS goodbye packets, seen within about a second. A publisher
///   host that vanishes without goodbyes (power loss, avahi-daemon killed) is dropped by the
///   subscribers' caches when the short TTL runs out: within TTL + ``NearbyDNSRecords/lossSlackSeconds``.
/// - Unavailable: avahi-daemon absent or gone (the client waits for it and re-publishes and
///   browses again when it is back), or no multicast interface up (checked every
///   ``interfaceCheckSeconds``; with `interfaces` given: none of those up).
/// - Threading: avahi callbacks run on avahi's thread; the public methods take its lock; events
///   go out on the medium's own queue.
package final class NearbyAvahiMedium: NearbyMedium, @unchecked Sendable {
    package let kind = NearbyMediumKind.mdns
    package static let interfaceCheckSeconds = 2

    private struct Entry {
        var message: NearbyMessage
        var group: OpaquePointer?
        var label: String?
    }

    private struct InstanceKey: Hashable {
        var interface: Int32
        var proto: Int32
        var name: String
    }

    private let interfaces: Set<String>?
    private let log: Logger
    private let poll: OpaquePointer
    private let queue = DispatchQueue(label: "castline.nearby.avahi")
    private let current = Mutex<NearbyMediumState>(.unavailable("connecting to avahi-daemon"))
    // Guarded by the avahi poll lock:
    private var client: OpaquePointer?
    private var running = false
    private var daemonProblem: String? = "connecting to avahi-daemon"
    private var interfaceProblem: String?
    private var entries: [UInt64: Entry] = [:]
    private var browsingWanted = false
    private var browser: OpaquePointer?
    private var resolvers: [InstanceKey: OpaquePointer] = [:]
    /// Instances reported as appeared, with the id they were reported under (the interface name
    /// is resolved once: after an interface is deleted, its index no longer has a name).
    private var reported: [InstanceKey: String] = [:]
    /// Bumped whenever browsing stops: events of an earlier browse still queued are dropped.
    private let browseGeneration = Mutex<UInt64>(0)
    private var handler: (@Sendable (NearbyMediumEvent) -> Void)?
    private var checkTimeout: OpaquePointer?
    private var stopped = false
    private let stopOnce = Mutex(false)

    /// - Parameter interfaces: only these interfaces count for availability and browse results (nil: all).
    package init(interfaces: Set<String>? = nil, logSystem: LogSystem) throws(NearbyMediumError) {
        self.interfaces = interfaces
        log = Logger(class: "NearbyAvahiMedium", system: logSystem)
        guard let poll = avahi_threaded_poll_new() else { throw NearbyMediumError("avahi: cannot create the poll thread") }
        self.poll = poll
    }

    deinit { stop() }

    package var state: NearbyMediumState { current.withLock { $0 } }

    package func start(_ events: @escaping @Sendable (NearbyMediumEvent) -> Void) {
        avahi_threaded_poll_lock(poll)
        handler = events
        interfaceProblem = checkInterfaces()
        connect()
        scheduleInterfaceCheck()
        avahi_threaded_poll_unlock(poll)
        avahi_threaded_poll_start(poll)
    }

    package func publish(id: UInt64, message: NearbyMessage) {
        locked {
            if let old = entries[id]?.group { avahi_entry_group_free(old) }
            entries[id] = Entry(message: message)
            if running { register(id) }
        }
    }

    package func withdraw(id: UInt64) {
        locked {
            if let entry = entries.removeValue(forKey: id), let group = entry.group {
                avahi_entry_group_free(group)   // avahi-daemon sends the goodbye packets
                log.debug("withdrawn", ["instance": .string(entry.label ?? "")])
            }
        }
    }

    package func setBrowsing(_ on: Bool) {
        locked {
            browsingWanted = on
            syncBrowsing()
        }
    }

    package func stop() {
        guard stopOnce.withLock({ done in defer { done = true }; return !done }) else { return }
        avahi_threaded_poll_lock(poll)
        stopped = true
        avahi_threaded_poll_unlock(poll)
        avahi_threaded_poll_stop(poll)
        if let timeout = checkTimeout, let api = avahi_threaded_poll_get(poll) { api.pointee.timeout_free(timeout) }
        checkTimeout = nil
        stopBrowsing()
        for id in entries.keys { if let group = entries[id]?.group { avahi_entry_group_free(group) } }
        entries = [:]
        if let client { avahi_client_free(client) }
        client = nil
        handler = nil
        avahi_threaded_poll_free(poll)
    }

    private func locked(_ body: () -> Void) {
        guard !stopOnce.withLock({ $0 }) else { return }
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        guard !stopped else { return }
        body()
    }

    // MARK: Client (avahi thread, or under its lock)

    private func connect() {
        var error: Int32 = 0
        let created = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, { client, state, context in
            guard let context else { return }
            Unmanaged<NearbyAvahiMedium>.fromOpaque(context).takeUnretainedValue().clientChanged(client, state)
        }, Unmanaged.passUnretained(self).toOpaque(), &error)
        if created == nil {
            daemonProblem = "avahi: cannot create a client: \(String(cString: avahi_strerror(error)))"
            publishState()
        } else {
            client = created
        }
    }

    private func clientChanged(_ client: OpaquePointer?, _ state: AvahiClientState) {
        if self.client == nil { self.client = client }
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            running = true
            daemonProblem = nil
            let host = avahi_client_get_host_name_fqdn(client).map { String(cString: $0) } ?? "?"
            log.info("avahi-daemon connected: publishing \(entries.count) message(s)", ["host": .string(host)])
            for id in entries.keys { register(id) }
            syncBrowsing()
            publishState()
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name is being (re)registered: the SRV target changes; re-register when running.
            running = false
            dropGroups()
        case AVAHI_CLIENT_CONNECTING:
            daemonLost("avahi-daemon is not running (or the system D-Bus is not reachable); waiting for it")
        case AVAHI_CLIENT_FAILURE:
            let code = avahi_client_errno(client)
            if Int(code) == AVAHI_ERR_DISCONNECTED, !stopped {
                daemonLost("avahi-daemon went away; waiting for it to come back")
                if let old = self.client { avahi_client_free(old) }
                self.client = nil
                connect()
                return
            }
            daemonLost("avahi client failed: \(String(cString: avahi_strerror(code)))")
        default:
            break
        }
    }

    private func daemonLost(_ reason: String) {
        running = false
        dropGroups()
        stopBrowsing()   // browsingWanted stays: browsing starts again when the daemon is back
        daemonProblem = reason
        publishState()
    }

    private func dropGroups() {
        for id in entries.keys {
            if let group = entries[id]?.group { avahi_entry_group_free(group) }
            entries[id]?.group = nil
        }
    }

    /// Emits the combined state when it changed.
    private func publishState() {
        let new: NearbyMediumState
        if let daemonProblem {
            new = .unavailable(daemonProblem)
        } else if let interfaceProblem {
            new = .unavailable(interfaceProblem)
        } else {
            new = .available
        }
        let changed = current.withLock { c -> Bool in
            guard c != new else { return false }
            c = new
            return true
        }
        guard changed else { return }
        if new.isAvailable { log.info("mDNS medium available") } else { log.warning("mDNS medium \(new)") }
        emit(.state(new))
    }

    private func emit(_ event: NearbyMediumEvent) {
        guard let handler else { return }
        if case .state = event {
            queue.async { handler(event) }
            return
        }
        let generation = browseGeneration.withLock { $0 }
        queue.async { [weak self] in if self?.browseGeneration.withLock({ $0 }) == generation { handler(event) } }
    }

    // MARK: Interfaces

    private func scheduleInterfaceCheck() {
        guard let api = avahi_threaded_poll_get(poll) else { return }
        var when = timeval()
        gettimeofday(&when, nil)
        when.tv_sec += Self.interfaceCheckSeconds
        if let old = checkTimeout {
            api.pointee.timeout_update(old, &when)
            return
        }
        checkTimeout = api.pointee.timeout_new(api, &when, { _, context in
            guard let context else { return }
            let medium = Unmanaged<NearbyAvahiMedium>.fromOpaque(context).takeUnretainedValue()
            medium.interfaceProblem = medium.checkInterfaces()
            medium.syncBrowsing()
            medium.publishState()
            medium.scheduleInterfaceCheck()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Nil when a usable interface is up; otherwise what is missing.
    private func checkInterfaces() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }   // cannot tell: do not claim a problem
        defer { freeifaddrs(list) }
        var up = Set<String>()
        var cursor = list
        while let item = cursor {
            let flags = Int32(item.pointee.ifa_flags)
            let name = String(cString: item.pointee.ifa_name)
            let usable = flags & Int32(IFF_UP) != 0 && flags & Int32(IFF_RUNNING) != 0
            if usable, let interfaces {
                if interfaces.contains(name) { up.insert(name) }
            } else if usable, flags & Int32(IFF_MULTICAST) != 0, flags & Int32(IFF_LOOPBACK) == 0 {
                up.insert(name)
            }
            cursor = item.pointee.ifa_next
        }
        guard up.isEmpty else { return nil }
        if let interfaces { return "none of the nearby interfaces is up (\(interfaces.sorted().joined(separator: ", ")))" }
        return "no multicast network interface is up"
    }

    // MARK: Publishing (avahi thread, or under its lock)

    private func register(_ id: UInt64) {
        guard let client, var entry = entries[id] else { return }
        let host = String(cString: avahi_client_get_host_name(client))
        let fqdn = String(cString: avahi_client_get_host_name_fqdn(client))
        let label = entry.label ?? NearbyDNSRecords.instanceLabel(host: host, id: id)
        let records = NearbyDNSRecords(instanceLabel: label, hostFQDN: fqdn, txt: NearbyTXTRecord.encode(entry.message))
        if entry.group == nil {
            entry.group = avahi_entry_group_new(client, { group, state, context in
                guard let context, let group else { return }
                Unmanaged<NearbyAvahiMedium>.fromOpaque(context).takeUnretainedValue().groupChanged(group, state)
            }, Unmanaged.passUnretained(self).toOpaque())
        } else {
            avahi_entry_group_reset(entry.group)
        }
        entry.label = label
        entries[id] = entry
        guard let group = entry.group else {
            log.error("avahi: cannot create an entry group: \(String(cString: avahi_strerror(avahi_client_errno(client))))",
                      ["instance": .string(label)])
            return
        }
        if let failure = add(records, to: group) {
            log.error("avahi: cannot publish \(label): \(failure)", ["instance": .string(label)])
            return
        }
        log.info("publishing \(entry.message)", ["instance": .string(label), "txtBytes": .int(records.txtRdata.count),
                                               "ttl": .int(Int(NearbyDNSRecords.recordTTL))])
    }

    private func add(_ records: NearbyDNSRecords, to group: OpaquePointer) -> String? {
        var nameBuffer = [CChar](repeating: 0, count: Int(AVAHI_DOMAIN_NAME_MAX))
        guard avahi_service_name_join(&nameBuffer, nameBuffer.count, records.instanceLabel, NearbyDNSRecords.serviceType,
                                      NearbyDNSRecords.domain) == 0 else { return "instance name \(records.instanceLabel) is invalid" }
        let instance = String(decoding: nameBuffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let type = NearbyDNSRecords.serviceType + "." + NearbyDNSRecords.domain
        let unique = AvahiPublishFlags(AVAHI_PUBLISH_UNIQUE.rawValue)
        let list: [(String, UInt16, AvahiPublishFlags, [UInt8], String)] = [
            (instance, 16, unique, records.txtRdata, "TXT"),
            (instance, 33, unique, records.srvRdata, "SRV"),
            (type, 12, AvahiPublishFlags(0), records.ptrRdata, "PTR"),
            ("_services._dns-sd._udp." + NearbyDNSRecords.domain, 12, AvahiPublishFlags(0), records.enumerationRdata, "enumeration PTR"),
        ]
        for (name, recordType, flags, rdata, what) in list {
            let result = rdata.withUnsafeBytes { bytes in
                avahi_entry_group_add_record(group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), flags, name,
                                             1, recordType, NearbyDNSRecords.recordTTL, bytes.baseAddress, bytes.count)
            }
            guard result == 0 else { return "\(what) record: \(String(cString: avahi_strerror(result)))" }
        }
        let result = avahi_entry_group_commit(group)
        return result == 0 ? nil : "commit: \(String(cString: avahi_strerror(result)))"
    }

    private func groupChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState) {
        guard let id = entries.first(where: { $0.value.group == group })?.key else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_COLLISION:
            guard let old = entries[id]?.label, let alternative = avahi_alternative_service_name(old) else { return }
            let renamed = String(cString: alternative)
            avahi_free(alternative)
            log.warning("mDNS name collision for \(old): renaming to \(renamed)")
            entries[id]?.label = renamed
            register(id)
        case AVAHI_ENTRY_GROUP_FAILURE:
            log.error("mDNS registration failed: \(String(cString: avahi_strerror(avahi_client_errno(client))))",
                      ["instance": .string(entries[id]?.label ?? "")])
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            log.debug("mDNS records established", ["instance": .string(entries[id]?.label ?? "")])
        default:
            break
        }
    }

    // MARK: Browsing (avahi thread, or under its lock)

    /// Browses while a subscriber wants it and the medium is usable. Stopping while an interface
    /// is down and starting again when it is back makes the new browser replay avahi's cache, so
    /// messages reported lost during the outage are found again.
    private func syncBrowsing() {
        let wanted = browsingWanted && running && interfaceProblem == nil && !stopped
        if wanted, browser == nil { startBrowsing() }
        if !wanted, browser != nil || !resolvers.isEmpty || !reported.isEmpty { stopBrowsing() }
    }

    private func startBrowsing() {
        guard let client else { return }
        browser = avahi_service_browser_new(client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                                            NearbyDNSRecords.serviceType, nil, AvahiLookupFlags(0), { _, interface, proto, event, name, _, domain, _, context in
            guard let context else { return }
            Unmanaged<NearbyAvahiMedium>.fromOpaque(context).takeUnretainedValue()
                .browsed(interface: interface, proto: proto, event: event, name: name, domain: domain)
        }, Unmanaged.passUnretained(self).toOpaque())
        if browser == nil {
            log.error("avahi: cannot browse \(NearbyDNSRecords.serviceType): \(String(cString: avahi_strerror(avahi_client_errno(client))))")
        } else {
            log.debug("browsing \(NearbyDNSRecords.serviceType)")
        }
    }

    private func stopBrowsing() {
        for resolver in resolvers.values { avahi_service_resolver_free(resolver) }
        resolvers = [:]
        if let browser { avahi_service_browser_free(browser) }
        browser = nil
        reported = [:]
        browseGeneration.withLock { $0 &+= 1 }
    }

    private func interfaceName(_ index: AvahiIfIndex) -> String {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard index >= 0, if_indextoname(UInt32(index), &buffer) != nil else { return "if\(index)" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func instanceID(_ key: InstanceKey) -> String {
        "\(interfaceName(key.interface))/\(key.proto == AvahiProtocol(AVAHI_PROTO_INET6) ? "IPv6" : "IPv4")/\(key.name)"
    }

    private func browsed(interface: AvahiIfIndex, proto: AvahiProtocol, event: AvahiBrowserEvent, name: UnsafePointer<CChar>?,
                         domain: UnsafePointer<CChar>?) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let client else { return }
            if let interfaces, !interfaces.contains(interfaceName(interface)) { return }
            let key = InstanceKey(interface: interface, proto: proto, name: String(cString: name))
            guard resolvers[key] == nil else { return }
            let resolver = avahi_service_resolver_new(client, interface, proto, name, NearbyDNSRecords.serviceType, domain,
                                                      AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiLookupFlags(AVAHI_LOOKUP_NO_ADDRESS.rawValue),
                                                      { _, interface, proto, event, name, _, _, host, _, _, txt, _, context in
                guard let context else { return }
                Unmanaged<NearbyAvahiMedium>.fromOpaque(context).takeUnretainedValue()
                    .resolved(interface: interface, proto: proto, event: event, name: name, host: host, txt: txt)
            }, Unmanaged.passUnretained(self).toOpaque())
            if let resolver { resolvers[key] = resolver }
        case AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            let key = InstanceKey(interface: interface, proto: proto, name: String(cString: name))
            if let resolver = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(resolver) }
            if let id = reported.removeValue(forKey: key) {
                log.debug("instance gone", ["instance": .string(id)])
                emit(.disappeared(instance: id))
            }
        case AVAHI_BROWSER_FAILURE:
            log.error("avahi browse failed: \(String(cString: avahi_strerror(avahi_client_errno(client))))")
        default:
            break
        }
    }

    private func resolved(interface: AvahiIfIndex, proto: AvahiProtocol, event: AvahiResolverEvent, name: UnsafePointer<CChar>?,
                          host: UnsafePointer<CChar>?, txt: UnsafeMutablePointer<AvahiStringList>?) {
        guard let name else { return }
        let key = InstanceKey(interface: interface, proto: proto, name: String(cString: name))
        let id = reported[key] ?? instanceID(key)
        guard event == AVAHI_RESOLVER_FOUND else {
            log.warning("cannot resolve \(key.name) on \(interfaceName(interface)): \(String(cString: avahi_strerror(avahi_client_errno(client))))")
            return
        }
        var strings: [[UInt8]] = []
        var item = txt
        while let node = item {
            let length = Int(avahi_string_list_get_size(node))
            if let text = avahi_string_list_get_text(node) { strings.append(Array(UnsafeBufferPointer(start: text, count: length))) }
            item = avahi_string_list_get_next(node)
        }
        do {
            let message = try NearbyTXTRecord.decode(strings)
            let publisher = host.map { String(cString: $0) } ?? "?"
            if reported.updateValue(id, forKey: key) == nil {
                log.debug("instance resolved", ["instance": .string(id), "publisher": .string(publisher)])
            }
            emit(.appeared(instance: id, message: message, publisher: publisher))
        } catch {
            log.warning("ignoring \(key.name) on \(interfaceName(interface)): not a nearby message this castline reads: \(error)")
            if reported.removeValue(forKey: key) != nil { emit(.disappeared(instance: id)) }
        }
    }
}

/// The medium could not be created.
package struct NearbyMediumError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
