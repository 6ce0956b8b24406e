import Synchronization

/// Runs `body` with `resource`, then awaits `teardown`, also when `body` throws (a failed
/// `#require`): the scoped form of every test rig (`withSenderRig`, `withSimulatorRig`,
/// `withMediaServerRig`). The body's error is the one rethrown; a teardown error after a body
/// that threw is dropped, after one that returned it is thrown.
package func withTeardown<Resource>(_ resource: Resource, _ teardown: (Resource) async throws -> Void,
                                   body: (Resource) async throws -> Void) async throws {
    do {
        try await body(resource)
    } catch {
        try? await teardown(resource)
        throw error
    }
    try await teardown(resource)
}

/// Answers true to the first ``claim()`` only: what makes a rig's `stop()` safe to call twice (a
/// test that stops its rig itself, inside the scoped form that stops it again). A class, so a rig
/// that is a value shares it with its copies.
package final class FirstCall: Sendable {
    private let claimed = Atomic(false)

    package init() {}

    package func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    }
}
