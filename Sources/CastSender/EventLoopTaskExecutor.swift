import NIOCore

/// A Swift task executor that runs jobs on one NIO event loop: a task that prefers it
/// (`withTaskExecutorPreference`, `Task(executorPreference:)`) runs its nonisolated code, its
/// default-actor code and its continuations' resumptions on that loop's thread, so awaiting a
/// reply that the loop itself delivers costs no thread switch.
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    let loop: EventLoop

    init(_ loop: EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}
