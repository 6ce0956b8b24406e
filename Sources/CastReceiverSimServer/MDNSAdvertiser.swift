import Glibc
import CAvahi
import CastLogging
import Synchronization

/// Publishes simulated devices through the system's avahi-daemon (D-Bus, avahi-client), from the
/// simulator process itself. One entry group per device: service + subtypes + the `<id>.local`
/// address record. TXT changes (`st`, `rs`) are updated in place.
///
/// avahi runs its own thread (`AvahiThreadedPoll`); calls from other threads take its lock.
/// When avahi-daemon is absent or restarts, the client waits (`AVAHI_CLIENT_NO_FAIL`) and
/// re-publishes everything once the daemon is back; that is logged once per transition, never a crash.
public final class MDNSAdvertiser: @unchecked Sendable {
    private struct Entry {
        var advertisement: MDNSAdvertisement
        var group: OpaquePointer?
        var name: String
        var committed: MDNSAdvertisement?
    }

    private static let anyInterface = AvahiIfIndex(AVAHI_IF_UNSPEC)
    private static let ipv4 = AvahiProtocol(AVAHI_PROTO_INET)
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var entries: [String: Entry] = [:]   // guarded by the avahi poll lock
    private var running = false
    private var pollStarted = false
    private let log: Logger
    private let stateLock = Mutex<String>("starting")

    /// Starts the avahi thread and connects to the daemon. Fails only when avahi-client cannot
    /// create its poll thread (out of memory). An absent avahi-daemon is waited for; without a
    /// D-Bus system bus avahi-client cannot start at all, so the advertiser stays unavailable
    /// (``stateDescription`` says why, one warning is logged) and the devices are reachable by
    /// address only.
    public init(logSystem: LogSystem) throws(SimulatorError) {
        log = Logger(class: "MDNSAdvertiser", system: logSystem)
        guard let poll = avahi_threaded_poll_new() else { throw .io("avahi: cannot create the poll thread") }
        self.poll = poll
        // From here on every stored property is set, so `deinit` runs whatever happens next and
        // is the one place that frees the poll and the client.
        var error: Int32 = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        let created = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, { client, state, context in
            guard let context else { return }
            Unmanaged<MDNSAdvertiser>.fromOpaque(context).takeUnretainedValue().clientChanged(client, state)
        }, context, &error)
        guard created != nil else {
            // The state callback may have stored the client it was called with; avahi frees a
            // client that fails to start, so that pointer must not be freed again.
            client = nil
            let reason = String(cString: avahi_strerror(error))
            setState("unavailable: \(reason)")
            log.warning("mDNS advertisement unavailable: avahi-client cannot start (\(reason); is the D-Bus system bus"
                        + " running?): devices are reachable by address only", ["reason": .string(reason)])
            return
        }
        client = created
        avahi_threaded_poll_start(poll)
        pollStarted = true
    }

    deinit {
        if pollStarted { avahi_threaded_poll_stop(poll) }
        if let client { avahi_client_free(client) }
        avahi_threaded_poll_free(poll)
    }

    /// `running`, `waiting for avahi-daemon`, `failed: …`.
    public var stateDescription: String { stateLock.withLock { $0 } }

    /// Publishes or updates a device's advertisement.
    public func publish(_ advertisement: MDNSAdvertisement) {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        let uuid = advertisement.configuration.uuid
        var entry = entries[uuid] ?? Entry(advertisement: advertisement, group: nil, name: advertisement.instanceName)
        entry.advertisement = advertisement
        entries[uuid] = entry
        if running { sync(uuid) }
    }

    /// Removes a device's records (reboot, shutdown).
    public func withdraw(uuid: String) {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        if let group = entries.removeValue(forKey: uuid)?.group { avahi_entry_group_free(group) }
    }

    // MARK: On the avahi thread (or under its lock)

    private func clientChanged(_ client: OpaquePointer?, _ state: AvahiClientState) {
        if self.client == nil { self.client = client }
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            running = true
            setState("running")
            log.info("avahi-daemon connected: publishing \(entries.count) device(s)")
            for uuid in entries.keys { sync(uuid) }
        case AVAHI_CLIENT_CONNECTING:
            running = false
            dropGroups()
            setState("waiting for avahi-daemon")
            log.warning("avahi-daemon not reachable: devices are not advertised over mDNS until it is"
                        + " (they stay reachable by address)")
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            running = false
            dropGroups()
        case AVAHI_CLIENT_FAILURE:
            running = false
            dropGroups()
            if Int(avahi_client_errno(client)) == AVAHI_ERR_DISCONNECTED {
                // The daemon went away (stopped or restarted): a new client waits for it and re-publishes.
                setState("waiting for avahi-daemon")
                log.warning("avahi-daemon went away: devices are not advertised until it is back")
                reconnect()
                return
            }
            let reason = String(cString: avahi_strerror(avahi_client_errno(client)))
            setState("failed: \(reason)")
            log.error("avahi client failed: \(reason); mDNS advertisement stopped")
        default:
            break
        }
    }

    private func setState(_ text: String) { stateLock.withLock { $0 = text } }

    /// Replaces a disconnected client (on the avahi thread, from the old client's callback).
    private func reconnect() {
        if let old = client { avahi_client_free(old) }
        client = nil
        var error: Int32 = 0
        let created = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, { client, state, context in
            guard let context else { return }
            Unmanaged<MDNSAdvertiser>.fromOpaque(context).takeUnretainedValue().clientChanged(client, state)
        }, Unmanaged.passUnretained(self).toOpaque(), &error)
        if created == nil {
            setState("failed: \(String(cString: avahi_strerror(error)))")
            log.error("avahi: cannot create a client: \(String(cString: avahi_strerror(error))); mDNS advertisement stopped")
        } else {
            client = created
        }
    }

    private func dropGroups() {
        for uuid in entries.keys {
            if let group = entries[uuid]?.group { avahi_entry_group_free(group) }
            entries[uuid]?.group = nil
            entries[uuid]?.committed = nil
        }
    }

    /// Makes the daemon's records for `uuid` match the wanted advertisement.
    private func sync(_ uuid: String) {
        guard let client, var entry = entries[uuid] else { return }
        let ad = entry.advertisement
        if let group = entry.group, let committed = entry.committed, committed.subtypes == ad.subtypes {
            guard committed != ad else { return }
            // An endpoint that moved is registered anew below (a group's leader move withdraws the
            // old record first; an in-place SRV update, AVAHI_PUBLISH_UPDATE, was not seen by
            // browsers' running resolvers).
            let moved = committed.configuration.castPort != ad.configuration.castPort || committed.hostName != ad.hostName
                || committed.configuration.address != ad.configuration.address
            if moved {
                log.info("\(entry.name) moved to \(ad.configuration.address):\(ad.configuration.castPort): re-registering",
                         ["device": .string(uuid)])
            } else {
                let result = withStringList(ad.txt) { txt in
                    avahi_entry_group_update_service_txt_strlst(group, Self.anyInterface, Self.ipv4, AvahiPublishFlags(0),
                                                                entry.name, MDNSAdvertisement.serviceType, nil, txt)
                }
                if result == 0 {
                    entry.committed = ad
                    entries[uuid] = entry
                    log.debug("TXT updated: st=\(ad.busy ? 1 : 0) rs=\(ad.statusText)", ["device": .string(uuid)])
                    return
                }
                log.warning("TXT update failed: \(String(cString: avahi_strerror(result))); re-registering", ["device": .string(uuid)])
            }
        }
        if entry.group == nil {
            let context = Unmanaged.passUnretained(self).toOpaque()
            entry.group = avahi_entry_group_new(client, { group, state, context in
                guard let context, let group else { return }
                Unmanaged<MDNSAdvertiser>.fromOpaque(context).takeUnretainedValue().groupChanged(group, state)
            }, context)
        } else {
            avahi_entry_group_reset(entry.group)
        }
        guard let group = entry.group else {
            let code = avahi_client_errno(client)
            let hint = Int(code) == AVAHI_ERR_TOO_MANY_OBJECTS
                ? " (avahi-daemon allows one client objects-per-client-max entry groups, 1024 by default, and each"
                    + " simulated device needs one: raise it in avahi-daemon.conf [server] or run fewer devices per process)"
                : ""
            log.error("avahi: cannot create an entry group for \(entry.name): \(String(cString: avahi_strerror(code)))\(hint)", [
                "device": .string(uuid), "avahiError": .int(Int(code)),
            ])
            return
        }
        if let failure = register(ad, name: entry.name, in: group) {
            log.error("avahi: cannot publish \(entry.name): \(failure)", ["device": .string(uuid)])
            return
        }
        entry.committed = ad
        entries[uuid] = entry
        log.info("advertising \(entry.name) at \(ad.configuration.address):\(ad.configuration.castPort)", [
            "device": .string(uuid), "instance": .string(entry.name), "subtypes": .int(ad.subtypes.count),
        ])
    }

    private func register(_ ad: MDNSAdvertisement, name: String, in group: OpaquePointer) -> String? {
        var address = AvahiAddress()
        guard avahi_address_parse(ad.configuration.address, Self.ipv4, &address) != nil else {
            return "not an IPv4 address: \(ad.configuration.address)"
        }
        var result = avahi_entry_group_add_address(group, Self.anyInterface, Self.ipv4,
                                                   AvahiPublishFlags(AVAHI_PUBLISH_NO_REVERSE.rawValue), ad.hostName, &address)
        guard result == 0 else { return "address record: \(String(cString: avahi_strerror(result)))" }
        result = withStringList(ad.txt) { txt in
            avahi_entry_group_add_service_strlst(group, Self.anyInterface, Self.ipv4, AvahiPublishFlags(0), name,
                                                 MDNSAdvertisement.serviceType, nil, ad.hostName,
                                                 UInt16(ad.configuration.castPort), txt)
        }
        guard result == 0 else { return "service: \(String(cString: avahi_strerror(result)))" }
        for subtype in ad.subtypes {
            result = avahi_entry_group_add_service_subtype(group, Self.anyInterface, Self.ipv4, AvahiPublishFlags(0),
                                                           name, MDNSAdvertisement.serviceType, nil, subtype)
            guard result == 0 else { return "subtype \(subtype): \(String(cString: avahi_strerror(result)))" }
        }
        result = avahi_entry_group_commit(group)
        return result == 0 ? nil : "commit: \(String(cString: avahi_strerror(result)))"
    }

    private func groupChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState) {
        guard let uuid = entries.first(where: { $0.value.group == group })?.key else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_COLLISION:
            guard let alternative = avahi_alternative_service_name(entries[uuid]?.name ?? "") else { return }
            let renamed = String(cString: alternative)
            avahi_free(alternative)
            log.warning("mDNS name collision: renaming to \(renamed)", ["device": .string(uuid)])
            entries[uuid]?.name = renamed
            entries[uuid]?.committed = nil
            sync(uuid)
        case AVAHI_ENTRY_GROUP_FAILURE:
            log.error("mDNS registration failed: \(String(cString: avahi_strerror(avahi_client_errno(client))))",
                      ["device": .string(uuid)])
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            log.debug("mDNS records established", ["device": .string(uuid)])
        default:
            break
        }
    }

    private func withStringList<R>(_ strings: [String], _ body: (UnsafeMutablePointer<AvahiStringList>?) -> R) -> R {
        let pointers = strings.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        var constPointers = pointers.map { UnsafePointer<CChar>($0) }
        let list = constPointers.withUnsafeMutableBufferPointer {
            avahi_string_list_new_from_array($0.baseAddress, Int32(strings.count))
        }
        defer { avahi_string_list_free(list) }
        return body(list)
    }
}
