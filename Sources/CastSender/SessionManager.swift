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
    private var sessions: [String: CastSession] = [:]
    private var nextLocalID = 0
    private let listeners = WeakListeners<any CastSessionListener>()
    private let log: Logger
    private var transferCandidates: (@Sendable () async -> [CastDevice])?

    /// `group`: the event loops to use (default: a new group of `threads` threads, shut down by
    /// ``shutdown()``). A resume file that cannot be read is logged and ignored (nothing to resume).
    public init(options: CastOptions, group: EventLoopGroup? = nil, threads: Int = 1) {
        self.options = options
        self.group = group ?? MultiThreadedEventLoopGroup(numberOfThreads: max(1, min(threads, 64)))
        self.ownsGroup = group == nil
        let log = Logger(class: "SessionManager", system: options.logSystem)
        self.log = log
        if let path = options.sessionResumeFile {
            do {
                resumeStore = try SessionResumeStore(path: path)
            } catch {
                log.error("session resume file unusable, starting without it: \(error)", ["path": .string(path)])
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
        get async {
            var byDevice: [String: CastSession] = [:]
            for session in sessions.values where !(await session.state.isFinal) { byDevice[await session.device.id] = session }
            return byDevice
        }
    }

    /// The live session on `deviceID`, if any.
    public func session(on deviceID: String) async -> CastSession? { await activeSessions[deviceID] }

    /// Starts a session on `device` (ending nothing: a live session on the device is returned as is).
    public func startSession(on device: CastDevice) async throws(CastSessionError) -> CastSession {
        if let existing = await activeSessions[device.id] { return existing }
        let session = makeSession(device: device, resumeTarget: nil)
        sessions[device.id] = session
        do {
            try await session.start()
        } catch {
            if sessions[device.id] === session { sessions[device.id] = nil }
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
        for record in savedSessions where sessions[record.device.id] == nil {
            log.info("resuming saved session \(record.sessionID) on \(record.device)", [
                "device": .string(record.device.id), "session": .string(record.sessionID),
            ])
            let session = makeSession(device: record.device, resumeTarget: record)
            sessions[record.device.id] = session
            await session.resumeSaved()
            resumed.append(session)
        }
        return resumed
    }

    /// Ends every session.
    public func endAll(stopCasting: Bool) async {
        for session in sessions.values { await session.end(stopCasting: stopCasting) }
        sessions.removeAll()
    }

    /// Ends every session (leaving the apps running, so they can be resumed) and stops the event
    /// loops this manager created.
    public func shutdown(stopCasting: Bool = false) async {
        for session in sessions.values { await session.end(stopCasting: stopCasting, keepResumeRecord: true) }
        sessions.removeAll()
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
