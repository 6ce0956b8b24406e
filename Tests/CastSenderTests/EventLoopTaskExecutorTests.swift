import CastCore
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import CastSender

/// The session's own work runs on its event loop: the executor itself, and a session's start and
/// message handling observed through its listeners.
@Suite("EventLoopTaskExecutor", .timeLimit(.minutes(1)))
struct EventLoopTaskExecutorTests {
    @Test("a task preferring the executor runs on the loop, and resumes there after a continuation the loop resumes")
    func runsAndResumesOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let executor = EventLoopTaskExecutor(loop)
        let (first, afterResume, otherLoop) = await withTaskExecutorPreference(executor) { () async -> (Bool, Bool, Bool) in
            let first = loop.inEventLoop
            // Resumed from the other loop's thread: the task comes back to its preferred loop.
            let other = group.next()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                other.execute { continuation.resume() }
            }
            return (first, loop.inEventLoop, other.inEventLoop)
        }
        #expect(first, "the operation did not start on the loop")
        #expect(afterResume, "the task did not resume on its preferred loop")
        #expect(!otherLoop)
        // Without the preference the same code runs on the global pool, not on a loop.
        #expect(MultiThreadedEventLoopGroup.currentEventLoop == nil)
        try await group.shutdownGracefully()
    }

    @Test("a session starts on its event loop: didStart and the media listener run on a loop thread, not the global pool")
    func sessionWorkOnItsLoop() async throws {
        try await withSenderRig { rig in
            let recorder = ThreadRecorder()
            let manager = rig.manager()
            manager.addListener(recorder)
            let session = try await manager.startSession(on: rig.device())
            #expect(recorder.didStartOnLoop.withLock { $0 } == true, "didStart was not called on an event loop thread")
            // A status the device sends is handled by the reader on the loop too.
            session.remoteMediaClient.addListener(recorder)
            _ = try await SessionIntegrationTests.load(session)
            #expect(recorder.statusOnLoop.withLock { $0 } == true, "a media status was not handled on an event loop thread")
            await manager.endAll(stopCasting: true)
        }
    }
}

/// Notes whether the callbacks ran on an event-loop thread.
final class ThreadRecorder: CastSessionListener, RemoteMediaClientListener, Sendable {
    let didStartOnLoop = Mutex<Bool?>(nil)
    let statusOnLoop = Mutex<Bool?>(nil)

    func sessionDidStart(_ session: CastSession) {
        didStartOnLoop.withLock { $0 = MultiThreadedEventLoopGroup.currentEventLoop != nil }
    }

    func remoteMediaClient(_ client: RemoteMediaClient, didUpdate status: MediaStatus?) {
        statusOnLoop.withLock { $0 = ($0 ?? true) && MultiThreadedEventLoopGroup.currentEventLoop != nil }
    }
}
