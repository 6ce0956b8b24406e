/// How ``AsyncSequence/firstOutcome(within:where:)`` ended.
public enum FirstWithinOutcome<Element: Sendable>: Sendable {
    /// The first element that satisfied the predicate.
    case found(Element)
    /// The sequence ended (or threw, or the waiting task was cancelled) first.
    case ended
    /// The time ran out first.
    case timedOut
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// The first element that satisfies `predicate`, or nil when the sequence ends first or
    /// `timeout` seconds pass (clamped to 0…1 day). Iteration stops either way (for an
    /// `AsyncStream` the iterating task is cancelled, which ends the stream's consumer).
    public func first(within timeout: Double,
                      where predicate: @escaping @Sendable (Element) -> Bool = { _ in true }) async -> Element? {
        if case .found(let element) = await firstOutcome(within: timeout, where: predicate) { return element }
        return nil
    }

    /// ``first(within:where:)``, saying whether the sequence ended or the time ran out.
    public func firstOutcome(within timeout: Double,
                             where predicate: @escaping @Sendable (Element) -> Bool = { _ in true }) async -> FirstWithinOutcome<Element> {
        await withTaskGroup(of: FirstWithinOutcome<Element>.self) { group in
            group.addTask {
                do {
                    for try await element in self where predicate(element) { return .found(element) }
                } catch {
                    return .ended
                }
                return .ended
            }
            group.addTask {
                let seconds = timeout.isNaN ? 0 : Swift.min(Swift.max(timeout, 0), 86_400)
                try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                return .timedOut
            }
            let first = await group.next() ?? .ended
            group.cancelAll()
            return first
        }
    }
}
