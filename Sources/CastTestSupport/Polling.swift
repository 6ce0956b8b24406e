#if canImport(Glibc)
import Glibc
#endif

/// Runs `attempt` every `interval` until it returns a value or `timeout` seconds pass (tried once
/// more at the deadline); the value, or nil. The bounded wait tests use for state another thread
/// or process changes: it returns as soon as the state is there, so a generous bound costs nothing
/// when the test passes.
package func pollValue<Value>(timeout: Double, every interval: Duration = .milliseconds(10),
                             _ attempt: () async throws -> Value?) async rethrows -> Value? {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while ContinuousClock.now < deadline {
        if let value = try await attempt() { return value }
        try? await Task.sleep(for: interval)
    }
    return try await attempt()
}

/// Polls `condition` every `interval` until it holds or `timeout` seconds pass; true when it
/// held (checked once more at the deadline).
package func pollUntil(timeout: Double, every interval: Duration = .milliseconds(10),
                      _ condition: () async throws -> Bool) async rethrows -> Bool {
    try await pollValue(timeout: timeout, every: interval) { try await condition() ? true : nil } ?? false
}

/// ``pollUntil(timeout:every:_:)`` for synchronous code (a synchronous test, a helper thread):
/// blocks the calling thread between checks.
package func pollUntilBlocking(timeout: Double, every interval: Duration = .milliseconds(10),
                              _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    let pause = useconds_t(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        usleep(pause)
    }
    return try condition()
}
