import ArgumentParser
import CastCore
import CastNearby
import Glibc
import Synchronization

/// `castline nearby subscribe`: prints messages as they are found and lost.
struct NearbySubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Print nearby messages as they are found and lost, until SIGINT/SIGTERM, --timeout or --count.",
        discussion: """
            Text: `+ namespace/type "content" (from host)` when found, `-` when lost. JSON lines (--json): \
            {"event":"found"|"lost","namespace","type","content" (text, or null when not UTF-8),"content_base64",\
            "bytes","publisher","medium"}, and the events subscribed, medium, permission, waiting. With --count N: \
            exit 0 after N messages found, 1 when --timeout comes first. Without permission: exit code 4 (or wait \
            with --wait-for-permission).
            """)

    @OptionGroup var options: NearbyOptions
    @OptionGroup var medium: NearbyMediumOptions

    @Option(name: .long, help: "Only messages of this namespace.")
    var namespace = NearbyMessage.defaultNamespace

    @Flag(name: .long, help: "Messages of every namespace.")
    var anyNamespace = false

    @Option(name: .long, help: "Only messages of this type. Repeatable (default: every type).")
    var type: [String] = []

    @Option(name: .long, help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var timeout: Double?

    @Option(name: .long, help: ArgumentHelp("Stop after this many messages found.", valueName: "n"))
    var count: Int?

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout < 86_400 * 365) { throw ValidationError("--timeout must be a positive number of seconds") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        SignalWaiter.block([SIGINT, SIGTERM])
        let filter = NearbyMessageFilter(namespace: anyNamespace ? nil : namespace, types: type.isEmpty ? nil : Set(type))
        let runtime = try NearbyRuntime(options: options, medium: medium)
        defer { runtime.close() }
        let continuation = runtime.continuation
        if let timeout {
            Task {
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                continuation.yield(.expired)
            }
        }
        var events = runtime.events.makeAsyncIterator()
        if case .interrupted(let event) = try await runtime.start(&events) {
            if case .expired = event, let count {
                printError("castline: nearby subscribe: 0 of \(count) message(s) found within \(timeout?.formatted ?? "?") s (waited for the permission)")
                throw CastlineExit.failure
            }
            return
        }
        // Found/lost lines wait until the "subscribed" line is out (a message already in avahi's
        // cache can be found before subscribe() returns).
        let printer = runtime.printer
        let gate = Mutex<(open: Bool, pending: [@Sendable () -> Void])>((false, []))
        let emit: @Sendable (@escaping @Sendable () -> Void) -> Void = { line in
            gate.withLock { g in if g.open { line() } else { g.pending.append(line) } }
        }
        let subscription: NearbySubscription
        do {
            subscription = try runtime.manager.subscribe(
                filter: filter, strategy: NearbyStrategy(discoveryMode: .scan, medium: .mdns),
                found: { sighting in
                    emit { printer.sighting(sighting, found: true) }
                    continuation.yield(.found)
                },
                lost: { sighting in emit { printer.sighting(sighting, found: false) } })
        } catch {
            throw runtime.fail(error)
        }
        gate.withLock { g in
            printer.line("subscribed", ["filter": .string(filter.description)], text: "subscribed to \(filter)")
            for line in g.pending { line() }
            g = (true, [])
        }
        var found = 0
        loop: while let event = await events.next() {
            switch event {
            case .signal: break loop
            case .expired:
                if let count, found < count {
                    printError("castline: nearby subscribe: \(found) of \(count) message(s) found within \(timeout?.formatted ?? "?") s")
                    subscription.cancel()
                    throw CastlineExit.failure
                }
                break loop
            case .found:
                found += 1
                if let count, found >= count { break loop }
            case .permission: continue
            }
        }
        subscription.cancel()
    }
}
