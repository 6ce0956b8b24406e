import CastLogging
import CastSender
import Dispatch
@testable import CastPluginHost
import CastPluginSession
import CastTestSupport
import Synchronization
import Testing

/// The time bound on calls into a plugin instance: ``PluginCallWatch`` on a clock the test
/// drives, and a real log-sink plugin (`TestPluginBlocks`) whose `write` blocks.
@Suite struct PluginCallBoundTests {
    static let blocks = BuiltProducts.library("TestPluginBlocks")

    /// A clock the test sets, in nanoseconds.
    final class TestClock: Sendable {
        let now = Atomic<UInt64>(1_000)
        func advance(_ nanos: UInt64) { now.add(nanos, ordering: .relaxed) }
    }

    @Test func aCallPastItsBoundTripsTheWatchOnceAndNothingIsCalledAfter() {
        let clock = TestClock()
        let watch = PluginCallWatch(bound: 0.5, clock: { clock.now.load(ordering: .relaxed) }, watched: false)
        let fired = Mutex<[PluginCallWatch.Overrun]>([])
        watch.arm { overrun in fired.withLock { $0.append(overrun) } }

        // A call that returns in time never trips it, however late the check.
        #expect(watch.run("flush") { clock.advance(499_999_999) })
        clock.advance(10_000_000_000)
        #expect(!watch.check())
        #expect(watch.tripped == nil)

        #expect(watch.begin("on_message"))
        clock.advance(499_999_999)
        #expect(!watch.check())
        clock.advance(1)
        #expect(watch.check())
        #expect(!watch.check())
        #expect(fired.withLock { $0 } == [PluginCallWatch.Overrun(call: "on_message", bound: 0.5, elapsed: 0.5)])
        #expect(watch.tripped == PluginCallWatch.Overrun(call: "on_message", bound: 0.5, elapsed: 0.5))
        // Tripped: no further call reaches the plugin, and the handler never runs again.
        var called = false
        #expect(!watch.run("on_message") { called = true })
        #expect(!called)
        #expect(!watch.trip("close"))
        #expect(fired.withLock { $0.count } == 1)
    }

    @Test func aBoundedWaitGivesUpOnAQueueThatIsHeldAndTripsTheWatch() async {
        let clock = TestClock()
        let watch = PluginCallWatch(bound: 0.2, clock: { clock.now.load(ordering: .relaxed) }, watched: false)
        let fired = Mutex<[PluginCallWatch.Overrun]>([])
        watch.arm { overrun in fired.withLock { $0.append(overrun) } }
        let queue = DispatchQueue(label: "test.held")
        let release = DispatchSemaphore(value: 0)
        queue.async { release.wait() }
        let ran = Atomic(false)
        // The queue is held by earlier work: the wait ends when the clock passes the bound.
        async let waited = watch.runBounded("close", on: queue) { ran.store(true, ordering: .relaxed) }
        #expect(await pollUntil(timeout: 10) { watch.isWaiting })
        clock.advance(199_999_999)
        #expect(!watch.check())
        clock.advance(1)
        #expect(watch.check())
        let inTime = await waited
        #expect(!inTime)
        #expect(fired.withLock { $0 } == [PluginCallWatch.Overrun(call: "close", bound: 0.2, elapsed: 0.2)])
        // Once the queue is free the late call is skipped: the instance is not called again.
        release.signal()
        queue.sync {}
        let late = ran.load(ordering: .relaxed)
        #expect(!late)
    }

    @Test func aSinkThatBlocksIsNamedDisabledAndItsRecordsAreCountedAsDropped() async throws {
        let rig = try PluginHostRig(paths: [Self.blocks]) {
            $0.callTimeout = 0.3
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
        }
        rig.host.loadAll()
        #expect(rig.host.plugins.map(\.id) == ["test-blocks"])
        let sink = try rig.host.openLogSink(id: "test-blocking-sink", options: #"{"block_ms": 3000}"#, name: "stuck")
        rig.logSystem.addSink(sink, queueCapacity: 16)
        let log = Logger(class: "Producer", system: rig.logSystem)
        log.info("the first record: its write blocks")
        #expect(await pollUntil(timeout: 30) { sink.overrun != nil })
        let overrun = try #require(sink.overrun)
        #expect(overrun.call == "write")
        // Noticed by the watchdog after the bound (plus a tick), while the write still ran (3 s).
        #expect(overrun.elapsed >= 0.3 && overrun.elapsed < 2.5, "\(overrun)")

        // One error record names the sink and its plugin (it reaches the other sinks).
        let named = await pollValue(timeout: 30) { () -> LogRecord? in
            rig.logs.records.first { $0.className == "PluginLogSink" && $0.level == .error }
        }
        let record = try #require(named)
        #expect(record.fields["sink"] == .string("stuck"))
        #expect(record.fields["plugin"] == .string("test-blocks"))
        #expect(record.fields["call"] == .string("write"))
        #expect(record.fields["problem"] == .string("timed_out"))
        #expect(record.message == "plugin test-blocks (\(Self.blocks)): disabled: log sink stuck's write did not return within 0.3 s (plugins.call_timeout); its records are dropped and counted")
        #expect(rig.host.problems.map(\.kind) == [.timedOut])
        #expect(rig.host.problems.first?.description == record.message)

        // The records logged after the first are dropped and counted: those the queue cannot
        // take while the write hangs, then, once it returns, those the sink is handed.
        for i in 0..<100 { log.info("record \(i)") }
        #expect(await pollUntil(timeout: 30) {
            rig.logSystem.sinkStatistics.first { $0.name == "stuck" }?.queued == 0 && sink.discarded > 0 && sink.callInProgress == nil
        })
        let stats = try #require(rig.logSystem.sinkStatistics.first { $0.name == "stuck" })
        // Written: the first record only. Every other record handed over was discarded.
        #expect(stats.delivered == 1 + sink.discarded, "\(stats), discarded \(sink.discarded)")
        // The error record and the 100, each counted once (plus the queue's overflow reports).
        #expect(stats.dropped >= 101, "\(stats)")

        // A disabled sink is not opened again; closing it never waits on the plugin.
        #expect(throws: PluginLoadError.self) { try rig.host.openLogSink(id: "test-blocking-sink") }
        rig.logSystem.removeSinks(named: "stuck", timeout: .seconds(1))
        let closing = ContinuousClock.now
        sink.close()
        #expect(ContinuousClock.now - closing < .seconds(1))
    }

    @Test func closingASinkWhoseWriteHangsWaitsForTheWriteThenCloses() throws {
        let rig = try PluginHostRig(paths: [Self.blocks]) { $0.callTimeout = 5 }
        rig.host.loadAll()
        let sink = try rig.host.openLogSink(id: "test-blocking-sink", options: #"{"block_ms": 2000}"#, name: "slow")
        rig.logSystem.addSink(sink, queueCapacity: 16)
        let logged = ContinuousClock.now
        Logger(class: "Producer", system: rig.logSystem).info("blocks the write for 2 s")
        // The pipeline gives up on the worker stuck in the write (its own thread took the record
        // at once); this thread goes straight on to close, with no suspension point between.
        rig.logSystem.removeSinks(named: "slow", timeout: .milliseconds(300))
        let closing = ContinuousClock.now
        sink.close()
        let took = ContinuousClock.now - closing
        // The write began after the record was logged and blocks 2 s: close returned only after
        // it (the plugin's close never runs under a write), and well within its 5 s bound.
        #expect(ContinuousClock.now - logged >= .seconds(2))
        #expect(took < .seconds(5), "\(took)")
        #expect(sink.callInProgress == nil)
        #expect(sink.overrun == nil)
    }

    @Test func aDiscoveryWhoseStopHangsIsNamedDisabledAndTheStopReturnsAfterTheBound() async throws {
        let rig = try PluginHostRig(paths: [Self.blocks]) {
            $0.callTimeout = 0.3
            $0.pluginConfigs = ["test-blocks": #"{"block_ms": 6000}"#]
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
        }
        rig.host.loadAll()
        let provider = try #require(rig.host.discoveryProviders().first { $0.name == "test-blocking-discovery" })
        let manager = DiscoveryManager(criteria: .any, logSystem: rig.logSystem)
        await manager.add(provider)
        await manager.start()
        // The plugin's stop blocks 6 s; the provider gives up after the 0.3 s bound. (How long
        // this task waited is not the measure: on a loaded machine resuming it can take seconds.
        // The watchdog's own measure, in the record, is.)
        await manager.stop()
        let errors = await pollValue(timeout: 30) { () -> [LogRecord]? in
            let found = rig.logs.records.filter { $0.className == "PluginDiscoveryProvider" && $0.level == .error }
            return found.isEmpty ? nil : found
        } ?? []
        #expect(errors.count == 1, "\(errors.map(\.message))")
        #expect(errors.first?.fields["feature"] == .string("test-blocking-discovery"))
        #expect(errors.first?.fields["call"] == .string("stop"))
        #expect(errors.first?.fields["problem"] == .string("timed_out"))
        guard case .double(let elapsed)? = errors.first?.fields["elapsed"] else {
            Issue.record("no elapsed field: \(errors)")
            return
        }
        #expect(elapsed >= 0.3 && elapsed < 6, "the stop was given up after \(elapsed) s; the plugin's takes 6 s")
        #expect(rig.host.problems.map(\.kind) == [.timedOut])
        #expect(rig.host.discoveryProviders().isEmpty, "a disabled plugin's discovery is not handed out again")
    }

    @Test func anInProcessInitThatHangsIsRefusedAfterTheBoundAndTheRestLoads() throws {
        // No scanner: the init runs in this process (as in a host built without castline).
        let folder = ScratchFolder("hangs-in-process")
        defer { folder.remove() }
        let hangs = folder.copy(BuiltProducts.library("TestPluginHangsInInit"))
        let rig = try PluginHostRig(paths: [hangs, BuiltProducts.library("TestPluginGood")]) {
            $0.callTimeout = 0.5
            $0.checkFileSafety = false
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
        }
        let start = ContinuousClock.now
        rig.host.loadAll()
        let took = ContinuousClock.now - start
        #expect(rig.host.problems.map(\.kind) == [.timedOut], "\(rig.host.problems)")
        #expect(rig.host.problems.first?.description.contains("its init did not return within 0.5 s") == true)
        #expect(rig.host.plugins.map(\.id) == ["test-good"])
        #expect(took >= .milliseconds(500) && took < .seconds(5), "\(took)")
        rig.host.shutdown()
    }

    @Test func aMediaFormatProbeThatHangsIsGivenUpAfterTheBoundAndNeverAskedAgain() throws {
        let rig = try PluginHostRig(paths: [Self.blocks]) {
            $0.callTimeout = 0.3
            $0.pluginConfigs = ["test-blocks": #"{"block_ms": 6000}"#]
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
        }
        rig.host.loadAll()
        // The plugin's probe sleeps 6 s; the caller gets its answer after the 0.3 s bound.
        let start = ContinuousClock.now
        let first = rig.host.probeMediaFormat(url: "http://a/x", contentType: "application/x-blocking")
        let took = ContinuousClock.now - start
        guard case .failure(let error) = first else {
            Issue.record("a probe that blocks 6 s answered: \(first)")
            return
        }
        #expect(error.reason == "test-blocks/test-blocking-format: disabled: its probe did not return within 0.3 s (plugins.call_timeout)")
        #expect(took >= .milliseconds(300) && took < .seconds(5), "\(took)")
        // Disabled: asked again, it is skipped with the same reason, and the error is logged once.
        let second = rig.host.probeMediaFormat(url: "http://a/y", contentType: "application/x-blocking")
        #expect(second == .failure(error))
        let errors = rig.records(class: "PluginHost").filter { $0.level == .error && $0.fields["feature"] == .string("test-blocking-format") }
        #expect(errors.count == 1, "\(errors.map(\.message))")
    }
}
