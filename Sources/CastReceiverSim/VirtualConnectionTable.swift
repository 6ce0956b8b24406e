import CastCore

/// One virtual connection: a sender id on one TCP connection, talking to one endpoint
/// (`receiver-0` or an app's transportId).
struct VirtualConnection: Sendable, Hashable {
    var connection: SenderConnectionID
    /// The sender's `source_id` (`sender-0`, `sender-vlc`, …).
    var senderID: String
    /// `receiver-0` or a transportId.
    var endpoint: String
    var connType: ConnectionType
    var userAgent: String?
    var senderInfo: JSONValue?
    /// Negotiated from `protocolVersion` / `protocolVersionList`; nil when the sender sent neither.
    var protocolVersion: Int?
    var openedAt: Double

    /// The identity of a virtual connection (the rest is associated data).
    struct Key: Hashable {
        var connection: SenderConnectionID
        var senderID: String
        var endpoint: String
    }

    var key: Key { Key(connection: connection, senderID: senderID, endpoint: endpoint) }
}

/// The virtual connections of one device, in the order they were opened. Value type.
struct VirtualConnectionTable: Sendable {
    private(set) var all: [VirtualConnection] = []

    /// Adds `connection`, replacing an existing one with the same identity (a repeated CONNECT
    /// updates its data and keeps its place). Returns `true` when it is new.
    @discardableResult
    mutating func open(_ connection: VirtualConnection) -> Bool {
        if let index = all.firstIndex(where: { $0.key == connection.key }) {
            all[index] = connection
            return false
        }
        all.append(connection)
        return true
    }

    /// Removes one; returns it when it existed.
    @discardableResult
    mutating func close(connection: SenderConnectionID, senderID: String, endpoint: String) -> VirtualConnection? {
        let key = VirtualConnection.Key(connection: connection, senderID: senderID, endpoint: endpoint)
        guard let index = all.firstIndex(where: { $0.key == key }) else { return nil }
        return all.remove(at: index)
    }

    /// Removes every virtual connection of a TCP connection; returns them.
    @discardableResult
    mutating func closeAll(on connection: SenderConnectionID) -> [VirtualConnection] {
        let removed = all.filter { $0.connection == connection }
        all.removeAll { $0.connection == connection }
        return removed
    }

    /// Removes every virtual connection to `endpoint`; returns them.
    @discardableResult
    mutating func closeAll(to endpoint: String) -> [VirtualConnection] {
        let removed = all.filter { $0.endpoint == endpoint }
        all.removeAll { $0.endpoint == endpoint }
        return removed
    }

    mutating func removeAll() { all.removeAll() }

    func exists(connection: SenderConnectionID, senderID: String, endpoint: String) -> Bool {
        all.contains { $0.connection == connection && $0.senderID == senderID && $0.endpoint == endpoint }
    }

    /// How many virtual connections TCP connection `connection` carries.
    func count(on connection: SenderConnectionID) -> Int {
        all.reduce(0) { $0 + ($1.connection == connection ? 1 : 0) }
    }

    /// Everything connected to `endpoint`, in opening order.
    func connections(to endpoint: String) -> [VirtualConnection] {
        all.filter { $0.endpoint == endpoint }
    }
}
