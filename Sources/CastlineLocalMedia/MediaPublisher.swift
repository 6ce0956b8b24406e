import CastCore
import CastLogging
import CastSender
import NIOCore
import Synchronization

/// The hub's local media: one ``MediaFileServer`` per local address that faces a device, and
/// the files each cast publishes there for its device alone (``MediaPublication``), revoked when
/// the cast ends: by its owner (a refused LOAD, a stop, the owner's next cast), or when the
/// device shows that it has moved on (other media, its media finished, its app gone), as
/// ``deviceShows(_:media:appRunning:)`` learns from the registry.
///
/// Also where ``LocalMediaPolicy`` (`media.roots`) is kept for every caller. Thread-safe: the
/// registry calls it without a hop; starting a server is the one async step.
package final class MediaPublisher: Sendable {
    package let policy: LocalMediaPolicy
    /// The ports a server may bind, the first free one (`0...0`: any).
    let ports: ClosedRange<Int>
    let group: EventLoopGroup
    let logSystem: LogSystem
    let log: Logger

    private struct Published {
        let owner: String
        let publication: MediaPublication
        /// The device has reported one of its URLs as its media.
        var seen = false
    }

    private struct State {
        var servers: [String: MediaFileServer] = [:]
        var byDevice: [String: [Published]] = [:]
        var stopped = false
    }

    private let state = Mutex(State())
    /// Serialises server starts (one per address), so two casts do not bind two servers.
    private let starting = AsyncSerialGate()

    /// `ports`: the port each server binds, the first free one of the range (`0...0`: any free one).
    package init(policy: LocalMediaPolicy, ports: ClosedRange<Int> = 0...0, group: EventLoopGroup, logSystem: LogSystem) {
        self.policy = policy
        self.ports = ports
        self.group = group
        self.logSystem = logSystem
        log = Logger(class: "MediaPublisher", system: logSystem)
    }

    /// Publishes `files` for `device` on behalf of `owner` (a job's name, ``CommandOwner/name``):
    /// the owner's earlier publication for the device is revoked first. Fails with 503
    /// `no_route` when no local address faces the device, 500 `serve_failed` when a file cannot
    /// be opened or no server can listen.
    package func publish(_ files: [String: ServedFile], to device: CastDevice, owner: String) async throws(LocalMediaError) -> MediaPublication {
        revoke(device.id, owner: owner)
        let address: String
        let peers: Set<String>
        do {
            address = try FacingAddress.localAddress(facing: device.host, port: device.port)
            peers = try FacingAddress.addresses(of: device.host)
        } catch {
            throw LocalMediaError(.unavailable, "no_route", "no local address reaches \(device.friendlyName) (\(device.host)): \(error)")
        }
        let server = try await server(on: address)
        let publication: MediaPublication
        do {
            publication = try server.publish(files, peers: peers, label: "\(device.friendlyName), \(owner)")
        } catch {
            throw LocalMediaError(.internal, "serve_failed", "cannot serve \(files.values.map(\.path).sorted().joined(separator: ", ")): \(error)")
        }
        state.withLock { $0.byDevice[device.id, default: []].append(Published(owner: owner, publication: publication)) }
        return publication
    }

    /// The server on `address`, started at the first publication there.
    private func server(on address: String) async throws(LocalMediaError) -> MediaFileServer {
        if let server = state.withLock({ $0.servers[address] }) { return server }
        return try await starting.run { () async throws(LocalMediaError) -> MediaFileServer in
            if let server = self.state.withLock({ $0.servers[address] }) { return server }
            var started: MediaFileServer?
            var failure = ""
            for port in self.ports where started == nil {
                do {
                    started = try await MediaFileServer.start(host: address, port: port, group: self.group, logSystem: self.logSystem)
                } catch {
                    failure = "\(error)"
                }
            }
            guard let server = started else {
                throw LocalMediaError(.internal, "serve_failed", Self.noPortMessage(address: address, ports: self.ports, failure: failure))
            }
            let stopped = self.state.withLock { s -> Bool in
                if !s.stopped { s.servers[address] = server }
                return s.stopped
            }
            if stopped {
                await server.stop()
                throw LocalMediaError(.unavailable, "stopping", "castline is stopping")
            }
            return server
        }
    }

    /// Why no media server could listen on `address`: the port or range of `media.port` tried
    /// (every port of a range is taken), and the last failure.
    static func noPortMessage(address: String, ports: ClosedRange<Int>, failure: String) -> String {
        if ports == 0...0 { return "cannot serve files on \(address): \(failure)" }
        if ports.count == 1 { return "cannot serve files on \(address):\(ports.lowerBound) (media.port): \(failure)" }
        return "cannot serve files on \(address): no port of media.port \(ports.lowerBound)-\(ports.upperBound) is free "
            + "(\(ports.count) tried; the last: \(failure)); widen the range or free a port"
    }

    /// Revokes what `owner` published for the device (its cast ended or is replaced).
    package func revoke(_ deviceID: String, owner: String) {
        let gone = state.withLock { s -> [MediaPublication] in
            let all = s.byDevice[deviceID] ?? []
            s.byDevice[deviceID] = all.filter { $0.owner != owner }
            return all.filter { $0.owner == owner }.map(\.publication)
        }
        for publication in gone { publication.revoke() }
    }

    /// What the device shows now, from the registry: a publication whose URL the device has
    /// shown is revoked once the device shows other media, finishes it, or runs no app. A
    /// transitional status (IDLE without a reason, LOADING) changes nothing, and neither does a
    /// publication the device has not fetched yet (its LOAD may still be on the way).
    package func deviceShows(_ deviceID: String, media: MediaStatus?, appRunning: Bool) {
        let contentID = media?.effectiveMedia?.contentID
        let ended = media.map { $0.playerState == .idle && $0.idleReason != nil } ?? false
        let gone = state.withLock { s -> [MediaPublication] in
            guard var all = s.byDevice[deviceID], !all.isEmpty else { return [] }
            var gone: [MediaPublication] = []
            for i in all.indices {
                let shown = contentID.map { all[i].publication.contains($0) } ?? false
                if shown, !ended {
                    all[i].seen = true
                    continue
                }
                guard all[i].seen else { continue }
                if !appRunning || ended || (contentID != nil && !shown) { gone.append(all[i].publication) }
            }
            all.removeAll { p in gone.contains { $0 === p.publication } }
            s.byDevice[deviceID] = all.isEmpty ? nil : all
            return gone
        }
        for publication in gone {
            log.debug("the device moved on: revoking \(publication.names.joined(separator: ", "))", ["device": .string(deviceID)])
            publication.revoke()
        }
    }

    /// Whether `url` is one castline publishes for the device now.
    package func isPublished(_ url: String, for deviceID: String) -> Bool {
        state.withLock { $0.byDevice[deviceID]?.contains { $0.publication.contains(url) } ?? false }
    }

    /// Figures for `/metrics`: files published, open connections, refusals over a bound.
    package var figures: (published: Int, connections: Int, refusals: MediaFileServer.Refusals) {
        let servers = state.withLock { Array($0.servers.values) }
        var refusals = MediaFileServer.Refusals()
        var published = 0, connections = 0
        for server in servers {
            published += server.publishedCount
            connections += server.connectionCount
            let r = server.refusals
            refusals.connections += r.connections
            refusals.connectionsPerPeer += r.connectionsPerPeer
            refusals.idle += r.idle
            refusals.peer += r.peer
        }
        return (published, connections, refusals)
    }

    /// Stops every server (castline is stopping).
    package func shutdown() async {
        let servers = state.withLock { s -> [MediaFileServer] in
            s.stopped = true
            s.byDevice = [:]
            defer { s.servers = [:] }
            return Array(s.servers.values)
        }
        for server in servers { await server.stop() }
    }
}

/// Runs async bodies one at a time, in the order they arrive.
final class AsyncSerialGate: Sendable {
    private let state = Mutex<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func run<T>(_ body: () async throws(LocalMediaError) -> T) async throws(LocalMediaError) -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.busy {
                    s.waiting.append(continuation)
                    return false
                }
                s.busy = true
                return true
            }
            if now { continuation.resume() }
        }
        defer {
            let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if s.waiting.isEmpty {
                    s.busy = false
                    return nil
                }
                return s.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
