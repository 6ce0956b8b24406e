import Dispatch
import CastLogging
import CastNearby
import CastTestSupport
import Testing

/// The manager over the in-process loopback medium: two managers stand for two hosts.
@Suite struct NearbyMessagesManagerTests {
    struct Pair {
        let network = NearbyLoopbackNetwork()
        let folder: ScratchFolder
        let publisher: NearbyMessagesManager
        let subscriber: NearbyMessagesManager
        let permissions: NearbyPermissionStore
        let sink: MemoryLogSink
        let logs: LogSystem

        init(_ name: String, grant: Bool = true) throws {
            folder = ScratchFolder(name)
            let (logs, sink) = try MemoryLogSink.makeSystem("Nearby*:debug")
            self.sink = sink
            self.logs = logs
            permissions = NearbyPermissionStore(directory: folder.path, logSystem: logs)
            if grant { try permissions.grant() }
            publisher = NearbyMessagesManager(media: [NearbyLoopbackMedium(network: network, name: "host-a", logSystem: logs)],
                                              permissions: permissions, logSystem: logs)
            subscriber = NearbyMessagesManager(media: [NearbyLoopbackMedium(network: network, name: "host-b", logSystem: logs)],
                                               permissions: permissions, logSystem: logs)
        }

        func close() {
            publisher.close()
            subscriber.close()
            folder.remove()
        }
    }

    let loopback = NearbyStrategy(medium: .loopback)

    @Test func foundWhenPublishedLostWhenCancelledAndOnlyMatchingTypesDelivered() throws {
        let pair = try Pair("nearby-manager-basic")
        defer { pair.close() }
        let all = NearbyTestRecorder(), screens = NearbyTestRecorder()
        let s1 = try pair.subscriber.subscribe(filter: NearbyMessageFilter(), strategy: loopback, found: all.found, lost: all.lost)
        let s2 = try pair.subscriber.subscribe(filter: NearbyMessageFilter(types: ["screen"]), strategy: loopback,
                                               found: screens.found, lost: screens.lost)
        let screen = try pair.publisher.publish(NearbyMessage(type: "screen", text: "lobby: dashboard"), strategy: loopback)
        let other = try pair.publisher.publish(NearbyMessage(type: "weather", text: "rain"), strategy: loopback)
        #expect(all.wait { $0.count == 2 && $0.contains(.found("lobby: dashboard")) && $0.contains(.found("rain")) })
        #expect(screens.wait { $0 == [.found("lobby: dashboard")] })
        screen.cancel()
        #expect(all.wait { $0.contains(.lost("lobby: dashboard")) })
        #expect(screens.wait { $0 == [.found("lobby: dashboard"), .lost("lobby: dashboard")] })
        other.cancel()
        #expect(all.wait { $0.contains(.lost("rain")) })
        #expect(screens.all == [.found("lobby: dashboard"), .lost("lobby: dashboard")], "the weather message never reached the screen filter")
        _ = (s1, s2)
    }

    @Test func aLateSubscriberFindsWhatIsAlreadyPublishedAndAVanishedPublisherIsLost() throws {
        let pair = try Pair("nearby-manager-late")
        defer { pair.close() }
        let (logs, _) = try MemoryLogSink.makeSystem()
        let medium = NearbyLoopbackMedium(network: pair.network, name: "host-c", logSystem: logs)
        let third = NearbyMessagesManager(media: [medium], permissions: pair.permissions, logSystem: logs)
        let publication = try third.publish(NearbyMessage(text: "hello"), strategy: loopback)
        let recorder = NearbyTestRecorder()
        let subscription = try pair.subscriber.subscribe(strategy: loopback, found: recorder.found, lost: recorder.lost)
        #expect(recorder.wait { $0 == [.found("hello")] })
        medium.vanish()
        #expect(recorder.wait { $0 == [.found("hello"), .lost("hello")] })
        _ = (publication, subscription)
        third.close()
    }

    @Test func releasingAPublicationWithdrawsIt() throws {
        let pair = try Pair("nearby-manager-release")
        defer { pair.close() }
        let recorder = NearbyTestRecorder()
        let subscription = try pair.subscriber.subscribe(strategy: loopback, found: recorder.found, lost: recorder.lost)
        var publication: NearbyPublication? = try pair.publisher.publish(NearbyMessage(text: "temporary"), strategy: loopback)
        #expect(recorder.wait { $0 == [.found("temporary")] })
        _ = publication
        publication = nil
        #expect(recorder.wait { $0 == [.found("temporary"), .lost("temporary")] })
        _ = subscription
    }

    @Test func withoutPermissionNothingIsPublishedOrBrowsedAndTheAPISaysSo() throws {
        let pair = try Pair("nearby-manager-consent", grant: false)
        defer { pair.close() }
        #expect(throws: NearbyError.permissionRequired(.notDetermined)) {
            _ = try pair.publisher.publish(NearbyMessage(text: "x"), strategy: loopback)
        }
        #expect(throws: NearbyError.permissionRequired(.notDetermined)) {
            _ = try pair.subscriber.subscribe(strategy: loopback, found: { _ in }, lost: { _ in })
        }
        #expect(NearbyError.permissionRequired(.notDetermined).description.contains("castline nearby permission grant"))
    }

    @Test func revokingSuspendsEverythingAndGrantingResumes() throws {
        let pair = try Pair("nearby-manager-revoke")
        defer { pair.close() }
        let recorder = NearbyTestRecorder(), status = NearbyTestRecorder()
        pair.subscriber.onStatusChange { status.add(.status($0)) }
        let subscription = try pair.subscriber.subscribe(strategy: loopback, found: recorder.found, lost: recorder.lost)
        let publication = try pair.publisher.publish(NearbyMessage(text: "kiosk 1 up"), strategy: loopback)
        #expect(recorder.wait { $0 == [.found("kiosk 1 up")] })
        try pair.permissions.revoke()
        #expect(recorder.wait { $0 == [.found("kiosk 1 up"), .lost("kiosk 1 up")] })
        #expect(status.wait { $0.contains(.status(.permission(.revoked))) })
        #expect(throws: NearbyError.permissionRequired(.revoked)) {
            _ = try pair.publisher.publish(NearbyMessage(text: "y"), strategy: loopback)
        }
        try pair.permissions.grant()
        #expect(recorder.wait { $0 == [.found("kiosk 1 up"), .lost("kiosk 1 up"), .found("kiosk 1 up")] })
        _ = (subscription, publication)
    }

    @Test func anUnavailableMediumIsReportedAndPublicationsComeBack() throws {
        let pair = try Pair("nearby-manager-medium")
        defer { pair.close() }
        let recorder = NearbyTestRecorder(), status = NearbyTestRecorder()
        pair.publisher.onStatusChange { status.add(.status($0)) }
        let subscription = try pair.subscriber.subscribe(strategy: loopback, found: recorder.found, lost: recorder.lost)
        let publication = try pair.publisher.publish(NearbyMessage(text: "signage"), strategy: loopback)
        #expect(recorder.wait { $0 == [.found("signage")] })
        pair.network.setUnavailable("link down")
        #expect(status.wait { $0 == [.status(.medium(.loopback, .unavailable("link down")))] })
        #expect(recorder.wait { $0 == [.found("signage"), .lost("signage")] })
        #expect(pair.publisher.mediumState(.loopback) == .unavailable("link down"))
        pair.network.setUnavailable(nil)
        #expect(status.wait { $0.last == .status(.medium(.loopback, .available)) })
        #expect(recorder.wait { $0 == [.found("signage"), .lost("signage"), .found("signage")] })
        _ = (subscription, publication)
    }

    @Test func strategyModesAndLifetimesAreHonoured() throws {
        let pair = try Pair("nearby-manager-strategy")
        defer { pair.close() }
        #expect(throws: NearbyError.strategyForbids(.scan, role: "publish")) {
            _ = try pair.publisher.publish(NearbyMessage(text: "x"), strategy: NearbyStrategy(discoveryMode: .scan, medium: .loopback))
        }
        #expect(throws: NearbyError.strategyForbids(.publish, role: "subscribe")) {
            _ = try pair.subscriber.subscribe(strategy: NearbyStrategy(discoveryMode: .publish, medium: .loopback), found: { _ in }, lost: { _ in })
        }
        #expect(throws: NearbyError.mediumNotConfigured(.mdns)) { _ = try pair.publisher.publish(NearbyMessage(text: "x")) }
        #expect(throws: NearbyError.contentTooLarge(bytes: 2000, limit: 1024)) {
            _ = try pair.publisher.publish(NearbyMessage(content: [UInt8](repeating: 1, count: 2000)), strategy: loopback)
        }
        let recorder = NearbyTestRecorder(), expiry = NearbyTestRecorder()
        let subscription = try pair.subscriber.subscribe(strategy: loopback, found: recorder.found, lost: recorder.lost)
        let publication = try pair.publisher.publish(NearbyMessage(text: "short-lived"),
                                                     strategy: NearbyStrategy(medium: .loopback, lifetime: .milliseconds(200)),
                                                     expired: { expiry.add(.expired) })
        #expect(recorder.wait { $0 == [.found("short-lived"), .lost("short-lived")] })
        #expect(expiry.wait { $0 == [.expired] })
        _ = (subscription, publication)
    }

    @Test func logsGoUnderNearbyClasses() throws {
        let pair = try Pair("nearby-manager-logs")
        defer { pair.close() }
        let publication = try pair.publisher.publish(NearbyMessage(text: "x"), strategy: loopback)
        publication.cancel()
        #expect(pair.logs.flush())
        let classes = Set(pair.sink.records.map(\.className))
        #expect(classes.contains("NearbyMessagesManager"))
        #expect(classes.contains("NearbyLoopbackMedium"))
        #expect(classes.allSatisfy { $0.hasPrefix("Nearby") })
    }
}

@Suite struct NearbyMessagesManagerLifetimeTests {
    final class Box: @unchecked Sendable { var subscription: NearbySubscription? }

    /// A handler that owns the last reference to a handle of the same manager: closing the manager
    /// releases it, and its deinit cancels through the manager again (the lock is not held then).
    @Test func closingAManagerWhoseHandlerOwnsAHandleDoesNotDeadlock() throws {
        let folder = ScratchFolder("nearby-manager-close")
        defer { folder.remove() }
        let (logs, _) = try MemoryLogSink.makeSystem()
        let permissions = NearbyPermissionStore(directory: folder.path, logSystem: logs)
        try permissions.grant()
        let manager = NearbyMessagesManager(media: [NearbyLoopbackMedium(network: NearbyLoopbackNetwork(), name: "h", logSystem: logs)],
                                            permissions: permissions, logSystem: logs)
        do {
            let box = Box()   // the handle lives only in the box, the box only in the handlers
            box.subscription = try manager.subscribe(strategy: NearbyStrategy(medium: .loopback),
                                                     found: { _ in _ = box }, lost: { _ in _ = box })
        }
        let done = NearbyTestRecorder()
        DispatchQueue.global().async { manager.close(); done.add(.expired) }
        #expect(done.wait(seconds: 5) { $0 == [.expired] }, "close() did not return within 5 s")
    }
}
