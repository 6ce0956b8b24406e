import CastCore
import Testing

@testable import CastPluginTesting

/// The plugin harness's script: what it accepts, and each refusal naming the step and the key.
@Suite struct HarnessScriptTests {
    @Test("a script with every kind of step reads as written")
    func everyStep() throws {
        let script = try HarnessScript.parse(
            """
            {"feature": "f", "config": {"a": 1}, "app": {"urn:x-cast:x": {"PING": {"type": "PONG"}}, "urn:x-cast:y": "echo"},
             "steps": [{"command": {"x": 1}, "expect": {"reply": {"ok": true}}, "timeout": 3},
                       {"command": {}, "expect": {"error": "no"}},
                       {"app_sends": {"type": "HI"}, "namespace": "urn:x-cast:y"},
                       {"expect_sent": {"type": "PING"}, "within": 0.5},
                       {"expect_record": {"class": "C", "level": "info", "message": "m", "fields": {"k": 1}}},
                       {"app": "drop"}]}
            """)
        #expect(script.feature == "f" && script.config == ["a": 1])
        #expect(script.app["urn:x-cast:x"] == .replies(["PING": ["type": "PONG"]]) && script.app["urn:x-cast:y"] == .echo)
        #expect(
            script.steps == [
                .command(["x": 1], reply: ["ok": true], error: nil, timeout: 3),
                .command([:], reply: nil, error: "no", timeout: 5),
                .appSends(["type": "HI"], namespace: "urn:x-cast:y"),
                .expectSent(["type": "PING"], namespace: nil, within: 0.5),
                .expectRecord(.init(className: "C", level: "info", message: "m", fields: ["k": 1]), within: 2),
                .app(.drop),
            ])
    }

    @Test(
        "refusals name the step and what is wrong",
        arguments: [
            ("[]", "must be a JSON object"),
            (#"{"steps": []}"#, "steps: a non-empty array is required"),
            (#"{"stepz": [{"app": "stop"}]}"#, "unknown key \"stepz\""),
            (#"{"steps": [{"app": "stop"}, {"app": "explode"}]}"#, "steps[1]: app: one of stop, relaunch, drop"),
            (#"{"steps": [{"command": {}, "timeout": 0}]}"#, "steps[0]: timeout: seconds in (0, 60]"),
            (#"{"steps": [{"wait": 1}]}"#, "steps[0]: a step is one of command"),
            (#"{"app": {"urn:x-cast:x": 3}, "steps": [{"app": "stop"}]}"#, "app.urn:x-cast:x"),
        ])
    func refusals(text: String, reason: String) {
        #expect(throws: HarnessScriptError.self) { try HarnessScript.parse(text) }
        do { _ = try HarnessScript.parse(text) } catch { #expect(error.reason.contains(reason), "\(error.reason)") }
    }

    @Test("contains: every expected key, recursively; arrays and scalars equal")
    func containment() {
        let actual: JSONValue = ["a": 1, "b": ["c": "d", "e": [1, 2]], "f": true]
        #expect(HarnessScript.contains(actual, ["b": ["c": "d"]]))
        #expect(HarnessScript.contains(actual, [:]))
        #expect(!HarnessScript.contains(actual, ["b": ["e": [1]]]))
        #expect(!HarnessScript.contains(actual, ["g": 1]))
        #expect(!HarnessScript.contains(actual, ["a": 2]))
    }
}
