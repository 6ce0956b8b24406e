/// Polls `condition` every `interval` until it holds or `timeout` seconds pass; true when it
/// held (checked once more at the deadline). The bounded wait tests use for state another thread
/// or process changes.
public func pollUntil(timeout: Double, every interval: Duration = .milliseconds(10),
                      _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return condition()
}
