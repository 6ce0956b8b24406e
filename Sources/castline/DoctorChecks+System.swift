import CastPluginHost
import Glibc

/// A network interface as the kernel reports it.
struct InterfaceFacts: Sendable, Equatable {
    var name: String
    var up: Bool
    var multicast: Bool
    var loopback: Bool
    var addresses: [String] = []

    /// What mDNS can use: up, multicast-capable, not loopback.
    var usable: Bool { up && multicast && !loopback }
}

/// A unix socket path as found: absent, not a socket, refusing, or accepting.
struct SocketFacts: Sendable, Equatable {
    var path: String
    var exists: Bool
    var isSocket: Bool
    /// Why connect failed (strerror text); nil when it connected.
    var connectError: String?
}

extension DoctorChecks {
    // MARK: Interfaces

    /// Every interface (getifaddrs), its flags (SIOCGIFFLAGS) and addresses.
    static func interfaces() -> [InterfaceFacts] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var found: [InterfaceFacts] = []
        var entry = list
        while let e = entry {
            entry = e.pointee.ifa_next
            let name = String(cString: e.pointee.ifa_name)
            let flags = Int32(bitPattern: e.pointee.ifa_flags)
            if !found.contains(where: { $0.name == name }) {
                found.append(InterfaceFacts(name: name, up: flags & Int32(IFF_UP) != 0,
                                            multicast: flags & Int32(IFF_MULTICAST) != 0,
                                            loopback: flags & Int32(IFF_LOOPBACK) != 0))
            }
            if let address = e.pointee.ifa_addr.flatMap(addressText), let i = found.firstIndex(where: { $0.name == name }) {
                found[i].addresses.append(address)
            }
        }
        // The flags as SIOCGIFFLAGS reports them now (getifaddrs' copy is the same, but only per address).
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd >= 0 {
            defer { close(fd) }
            for i in found.indices {
                var request = ifreq()
                let name = Array(found[i].name.utf8.prefix(Int(IF_NAMESIZE) - 1))
                withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { raw in
                    for (j, byte) in name.enumerated() { raw[j] = byte }
                }
                let rc = withUnsafeMutablePointer(to: &request) { ioctl(fd, UInt(SIOCGIFFLAGS), $0) }
                guard rc == 0 else { continue }
                let flags = Int32(request.ifr_ifru.ifru_flags)
                found[i].up = flags & Int32(IFF_UP) != 0
                found[i].multicast = flags & Int32(IFF_MULTICAST) != 0
                found[i].loopback = flags & Int32(IFF_LOOPBACK) != 0
            }
        }
        return found
    }

    private static func addressText(_ address: UnsafeMutablePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var a = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &a, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        case AF_INET6:
            var a = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            guard inet_ntop(AF_INET6, &a, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        default:
            return nil
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The interfaces mDNS can use; an error naming each `discovery.interfaces` entry that does not
    /// exist, is down or lacks multicast. Pure. `discoveryNeeded`: mDNS discovery is in use (no
    /// usable interface is then an error, else a warning).
    static func interfaceChecks(_ all: [InterfaceFacts], configured: [String], discoveryNeeded: Bool, configFile: String) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let candidates = configured.isEmpty ? all : all.filter { configured.contains($0.name) }
        let usable = candidates.filter(\.usable)
        func describe(_ i: InterfaceFacts) -> String {
            i.addresses.isEmpty ? i.name : "\(i.name) (\(i.addresses.joined(separator: ", ")))"
        }
        let scope = configured.isEmpty ? "" : " among discovery.interfaces (\(configured.joined(separator: ", ")))"
        if usable.isEmpty {
            let states = candidates.map { i in "\(i.name): " + (i.loopback ? "loopback" : !i.up ? "down" : "no MULTICAST") }
            let seen = states.isEmpty ? (configured.isEmpty ? "no interface at all" : "none of them exists here") : states.joined(separator: "; ")
            checks.append(DoctorCheck("interfaces", discoveryNeeded ? .error : .warning,
                                      "no interface is up with multicast\(scope) (\(seen)): "
                                          + "mDNS queries (UDP 5353 to 224.0.0.251 / ff02::fb) cannot reach any device, so discovery will find nothing",
                                      fix: "bring up the interface facing the devices (`sudo ip link set IFACE up multicast on`), "
                                          + "or list the devices by address under devices: in the config"))
        } else {
            checks.append(DoctorCheck("interfaces", .ok, "multicast\(scope) on " + usable.map(describe).joined(separator: ", ")))
        }
        let file = configFile == "<default>" ? "the config" : configFile
        for name in configured {
            let check = "interface \(name)"
            guard let i = all.first(where: { $0.name == name }) else {
                checks.append(DoctorCheck(check, .error, "discovery.interfaces names \(name), which does not exist here (interfaces: "
                                              + all.map(\.name).joined(separator: ", ") + ")",
                                          fix: "correct discovery.interfaces in \(file) (`ip link` lists the interfaces)"))
                continue
            }
            if !i.up {
                checks.append(DoctorCheck(check, .error, "discovery.interfaces names \(name), which is down", fix: "sudo ip link set \(name) up"))
            } else if i.loopback {
                checks.append(DoctorCheck(check, .warning, "discovery.interfaces names \(name), a loopback interface: only devices on this host (castline sim) are found",
                                          fix: "name the interface facing the devices in discovery.interfaces in \(file)"))
            } else if !i.multicast {
                checks.append(DoctorCheck(check, .error, "discovery.interfaces names \(name), which has no MULTICAST flag: mDNS cannot use it",
                                          fix: "sudo ip link set \(name) multicast on"))
            }
        }
        return checks
    }

    // MARK: Sockets

    /// Whether a unix socket exists and accepts a connection (`type`: SOCK_STREAM or SOCK_DGRAM).
    static func socketFacts(_ path: String, abstract: Bool = false, type: Int32) -> SocketFacts {
        var facts = SocketFacts(path: abstract ? "@" + path : path, exists: true, isSocket: true)
        if !abstract {
            var st = stat()
            facts.exists = stat(path, &st) == 0
            facts.isSocket = facts.exists && (st.st_mode & S_IFMT) == S_IFSOCK
            guard facts.isSocket else {
                facts.connectError = facts.exists ? "not a socket" : "no such file"
                return facts
            }
        }
        switch connectUnix(path, abstract: abstract, type: type) {
        case .success(let fd): close(fd)
        case .failure(let error):
            facts.connectError = error.text
            if abstract { facts.exists = false }
        }
        return facts
    }

    struct SocketError: Error { var text: String }

    /// A connected non-blocking unix socket (the caller closes it).
    static func connectUnix(_ path: String, abstract: Bool, type: Int32) -> Result<Int32, SocketError> {
        let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failure(SocketError(text: String(cString: strerror(errno)))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8), offset = abstract ? 1 : 0
        guard bytes.count + offset < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return .failure(SocketError(text: "path too long"))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[offset + i] = byte }
        }
        let length = abstract ? MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + 1 + bytes.count : MemoryLayout<sockaddr_un>.size
        let rc = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(length)) } }
        if rc != 0, errno != EINPROGRESS, errno != EAGAIN {
            let text = String(cString: strerror(errno))
            close(fd)
            return .failure(SocketError(text: text))
        }
        return .success(fd)
    }

    /// The journald socket verdict (absent: a warning; the journald sink reports it too). Pure.
    static func journaldCheck(_ facts: SocketFacts, sinkConfigured: Bool) -> DoctorCheck {
        guard let error = facts.connectError else {
            return DoctorCheck("journald", .ok, "\(facts.path) accepts datagrams")
        }
        let why = !facts.exists ? "no socket at \(facts.path): journald is not running here"
            : !facts.isSocket ? "\(facts.path) is not a socket" : "\(facts.path) refuses datagrams (\(error)): journald is not running"
        return DoctorCheck("journald", .warning,
                           why + (sinkConfigured ? "; the journald log sink will report its records as undeliverable" : " (only the journald log sink needs it)"),
                           fix: sinkConfigured ? "run castline under systemd, or log to a file with the json sink (logging.sinks: [{type: json, options: {path: …}}])"
                                               : "nothing to do unless you add a journald log sink")
    }
}

extension String {
    /// Without one trailing `suffix` character.
    func trimmingSuffix(_ suffix: Character) -> String { last == suffix ? String(dropLast()) : self }
}
