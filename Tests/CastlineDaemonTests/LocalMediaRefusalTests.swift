import CastlineLocalMedia
import Testing

@testable import CastlineDaemon

/// A local-media refusal reaches the API and the CLI as the ControlError of the same kind and
/// code: its HTTP status and exit code are the ones `docs/api.md` lists.
@Suite struct LocalMediaRefusalTests {
    @Test(arguments: [
        (LocalMediaError(.forbidden, "path_not_allowed", "/etc/shadow is outside media.roots (/srv)"), 403, Int32(1)),
        (LocalMediaError.usage("unreadable_file", "cannot read /srv/a.mp4: Permission denied"), 400, Int32(64)),
        (LocalMediaError(.unavailable, "no_route", "no local address reaches TV (10.0.0.9)"), 503, Int32(1)),
        (LocalMediaError(.internal, "serve_failed", "no free port in 8000...8001"), 500, Int32(1)),
    ])
    func aRefusalKeepsItsCodeAndMessageWithTheStatusOfItsKind(refusal: LocalMediaError, status: Int, exit: Int32) {
        let error = ControlError(refusal)
        #expect(error.code == refusal.code && error.message == refusal.message)
        #expect(error.httpStatus == status && error.exitCode == exit)
    }

    @Test func aStepThatThrowsIsTheCommandsError() throws {
        #expect(throws: ControlError(.forbidden, "path_not_allowed", "no")) {
            try ControlError.localMedia { () throws(LocalMediaError) -> Int in throw LocalMediaError(.forbidden, "path_not_allowed", "no") }
        }
        let value = try ControlError.localMedia { () throws(LocalMediaError) -> Int in 7 }
        #expect(value == 7)
    }
}
