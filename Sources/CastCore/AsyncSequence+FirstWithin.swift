extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// The first element that satisfies `predicate`, or nil when the sequence ends first or
    /// `timeout` seconds pass (clamped to 0…1 day). Iteration stops either way (for an
    /// `AsyncStream` the iterating task is cancelled, which ends the stream's consumer).
    public func first(within timeout: Double,
                      where predicate: @escaping @Sendable (Element) -> Bool = { _ in true }) async -> Element? {
        await withTaskGroup(of: Element?.self) { group in
            group.addTask {
                do {
                    for try await element in self where predicate(element) { return element }
                } catch {
                    return nil
                }
                return nil
            }
            group.addTask {
                let seconds = timeout.isNaN ? 0 : Swift.min(Swift.max(timeout, 0), 86_400)
                try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
