import CastLogging
import NIOCore
import NIOPosix

/// Starts, resumes and ends sessions (GCKSessionManager), one per device. Listeners added here
/// hear every session it creates. Owns the event loops the connections run on.
public actor SessionManager {
    public let options: CastOptions
    private let group: EventLoopGroup
    private let ownsGroup: Bool
    private let resumeStore: SessionResumeStore?
    /// Sessions by local id (a session's device changes when it is transferred).
    private var sessions: [Int: CastSession] = [:]
    /// Sessions being started, by device id.
    private var starting: [String: CastSession] = [:]
    private var nextLocalID = 0
    /// Set by ``shutdown(stopCasting:)``: no session starts after it.
    private var isShutDown = false
    private let listeners = WeakListeners<any CastSessionListener>()
    private let log: Logger
    private var transferCandidates: (@Sendable () async -> [CastDevice])?

    /// Event-loop threads when none are given: one per core, at most 4. TLS handshakes are most
    /// of a session's start-up CPU, and with one loop a fleet's handshakes queue on one core.
    public static var defaultThreads: Int { min(4, max(1, System.coreCount)) }

    /// `group`: the event loops to use (default: a new group of `threads` threads, shut down by
    /// ``shutdown()``). A group you pass must outlive the sessions: call ``shutdown()`` (or end
    /// them) before shutting it down, since a session that loses its device reconnects on it, and
    /// NIO drops work handed to a loop that has shut down (SWIFTNIO_STRICT makes that a crash).
    /// A resume file that cannot be read is logged and ignored (nothing to resume).
    /// `transferCandidates`: see ``setTransferCandidates(_:)``.
    public init(options: CastOptions, group: EventLoopGroup? = nil, threads: Int = SessionManager.defaultThreads,
                transferCandidates: (@Sendable () async -> [CastDevice])? = nil) {
        self.options = options
        self.transferCandidates = transferCandidates
        self.group = group ?? MultiThreadedEventLoopGroup(numberOfThreads: max(1, min(threads, 64)))
        self.ownsGroup = group == nil
        let log = Logger(class: "SessionManager", system: options.logSystem)
        self.log = log
        if let path = options.sessionResumeFile {
            do {
                let (store, repaired) = try SessionResumeStore.openRepairing(path: path)
                if let repaired {
                    log.error("session resume file was unusable, starting with an empty one: \(repaired)", ["path": .string(path)])
                }
                resumeStore = store
            } catch {
                log.error("session resume file unusable, sessions will not be saved: \(error)", ["path": .string(path)])
                resumeStore = nil
            }
        } else {
            resumeStore = nil
        }
    }

    /// Adds a listener for every session (held weakly).
    public nonisolated func addListener(_ listener: any CastSessionListener) { listeners.add(listener) }
    public nonisolated func removeListener(_ listener: any CastSessionListener) { listeners.remove(listener) }

    /// Where a session may have moved when its app stops (stream transfer started elsewhere):
    /// usually the discovery manager's devices (``CastContext`` sets this).
    public func setTransferCandidates(_ provider: (@Sendable () async -> [CastDevice])?) async {
        transferCandidates = provider
        for session in sessions.values { await session.setTransferCandidates(provider) }
    }

    /// The live sessions by the id of the device each runs on now (a transferred session moves).
    public var activeSessions: [String: CastSession] {
        var byDevice: [String: CastSession] = [:]
        for session in sessions.values { if let device = session.liveDeviceID { byDevice[device] = session } }
        return byDevice
    }

    /// The live session on `deviceID`, if any.
    public func session(on deviceID: String) -> CastSession? {
        sessions.values.first { $0.liveDeviceID == deviceID }
    }

    /// Starts a session on `device`. A live session on the device (or one starting there) is
    /// returned instead of a second one.
    public func startSession(on device: CastDevice) async throws(CastSessionError) -> CastSession {
        guard !isShutDown else { throw .cancelled }
        // Claimed before the first await, so two concurrent calls for one device share a session.
        if let starting = starting[device.id] {
            let state = await starting.waitForState(timeout: options.longestStart) {
                $0 != .idle && $0 != .connecting
            }
            if case .failed(let error) = state { throw error }
            return starting
        }
        let session = makeSession(device: device, resumeTarget: nil)
        starting[device.id] = session
        defer { if starting[device.id] === session { starting[device.id] = nil } }
        if let existing = self.session(on: device.id) { return existing }
        sessions[session.localID] = session
        do {
            try await session.start()
        } catch {
            sessions[session.localID] = nil
            throw error
        }
        return session
    }

    /// The sessions saved in the resume file (before a restart).
    public var savedSessions: [SessionResumeRecord] { resumeStore?.saved ?? [] }

    /// Resumes every saved session whose app session still runs; returns them once each has
    /// resumed or given up (see their state).
    public func resumeSavedSessions() async -> [CastSession] {
        var resumed: [CastSession] = []
        for record in savedSessions {
            guard !isShutDown else { break }
            guard self.session(on: record.device.id) == nil else { continue }
            log.info("resuming saved session \(record.sessionID) on \(record.device)", [
                "device": .string(record.device.id), "session": .string(record.sessionID),
            ])
            let session = makeSession(device: record.device, resumeTarget: record)
            sessions[session.localID] = session
            await session.resumeSaved()
            resumed.append(session)
        }
        return resumed
    }

    /// Ends every session.
    public func endAll(stopCasting: Bool) async {
        // Taken out first: sessions started while these end are not dropped unended.
        let ending = Array(sessions.values)
        sessions.removeAll()
        for session in ending { await session.end(stopCasting: stopCasting) }
    }

    /// Ends every session (leaving the apps running and their resume records, so a restart can
    /// resume them, unless `stopCasting`) and stops the event loops this manager created. Starts
    /// asked for afterwards fail with `cancelled`.
    public func shutdown(stopCasting: Bool = false) async {
        isShutDown = true
        let ending = Array(sessions.values)
        sessions.removeAll()
        for session in ending { await session.end(stopCasting: stopCasting, keepResumeRecord: true) }
        if ownsGroup { try? await group.shutdownGracefully() }
    }

    private func makeSession(device: CastDevice, resumeTarget: SessionResumeRecord?) -> CastSession {
        nextLocalID += 1
        let session = CastSession(localID: nextLocalID, device: device, options: options, group: group, resumeStore: resumeStore,
                                  resumeTarget: resumeTarget, transferCandidates: transferCandidates)
        for listener in listeners.current { session.addListener(listener) }
        return session
    }
}
