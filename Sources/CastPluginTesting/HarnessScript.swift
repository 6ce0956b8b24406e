import CastCore

/// What `castline plugins test --script FILE` runs against one channel feature: the plugin's
/// config, how the scripted app answers on each namespace, and the steps. JSON:
///
/// ```json
/// {"feature": "example-ping", "config": {},
///  "app": {"urn:x-cast:org.castline.example.ping": {"PING": {"type": "PONG"}}},
///  "steps": [
///    {"command": {}, "expect": {"reply": {"pong": true}}},
///    {"expect_sent": {"type": "PING"}},
///    {"app": "stop"}, {"expect_record": {"class": "PingChannel", "message": "app stopped"}},
///    {"app_sends": {"type": "HELLO"}}]}
/// ```
/// Without a script the harness runs ``HarnessScript/smoke(feature:namespaces:)``. Pure.
package struct HarnessScript: Sendable, Equatable {
    /// How the simulated app answers on one namespace.
    package enum AppMode: Sendable, Equatable {
        /// Never answers (the default): the steps push what the app says.
        case silent
        /// Sends every message back unchanged.
        case echo
        /// JSON `type` → reply (the incoming `requestId` is copied in).
        case replies([String: JSONValue])
    }

    package enum Step: Sendable, Equatable {
        /// A command to the channel; `reply` a subset its answer must contain, or `error` a text
        /// its failure must contain; neither: any answer passes, only silence fails.
        case command(JSONValue, reply: JSONValue?, error: String?, timeout: Double)
        /// The app sends `payload` on `namespace` (nil: the feature's first).
        case appSends(JSONValue, namespace: String?)
        /// The plugin sent a message containing `payload` to the app, since the last such step.
        case expectSent(JSONValue, namespace: String?, within: Double)
        /// The plugin (or the host about it) logged a record with these parts.
        case expectRecord(RecordPattern, within: Double)
        /// Something happens to the app or the link.
        case app(AppAction)
    }

    package enum AppAction: String, Sendable, Equatable, CaseIterable {
        /// The app stops, as if another sender stopped it.
        case stop
        /// castline launches the app again.
        case relaunch
        /// The network drops for a second (the app keeps running); the session resumes.
        case drop
    }

    package struct RecordPattern: Sendable, Equatable {
        package var className: String?
        package var level: String?
        /// A text the message contains.
        package var message: String?
        /// A subset of the record's fields.
        package var fields: JSONValue?
    }

    package var feature: String?
    package var config: JSONValue
    package var app: [String: AppMode]
    package var steps: [Step]

    package init(feature: String? = nil, config: JSONValue = .object([:]), app: [String: AppMode] = [:], steps: [Step]) {
        self.feature = feature
        self.config = config
        self.app = app
        self.steps = steps
    }

    /// What every channel must survive: a command answered (either way), its app stopped,
    /// relaunched and its link dropped, then a command answered again. The app echoes every
    /// message on every namespace (a plugin waiting for an answer gets one, if not the one it
    /// wants).
    package static func smoke(feature: String) -> HarnessScript {
        HarnessScript(
            feature: feature,
            steps: [
                .command(.object([:]), reply: nil, error: nil, timeout: 5),
                .app(.stop), .app(.relaunch), .app(.drop),
                .command(.object([:]), reply: nil, error: nil, timeout: 5),
            ])
    }

    /// Reads a script; the error names the step and what is wrong.
    package static func parse(_ text: String) throws(HarnessScriptError) -> HarnessScript {
        let root: JSONValue
        do { root = try JSONValue.parse(text) } catch { throw HarnessScriptError("the script is not JSON: \(error)") }
        guard case .object(let object) = root else { throw HarnessScriptError("the script must be a JSON object") }
        let known: Set<String> = ["feature", "config", "app", "steps"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw HarnessScriptError("unknown key \"\(unknown)\" (known: feature, config, app, steps)")
        }
        var script = HarnessScript(feature: object["feature"]?.string, config: object["config"] ?? .object([:]), steps: [])
        if case .object(let app)? = object["app"] {
            for (namespace, mode) in app {
                switch mode {
                case .string("silent"): script.app[namespace] = .silent
                case .string("echo"): script.app[namespace] = .echo
                case .object(let table): script.app[namespace] = .replies(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }))
                default: throw HarnessScriptError("app.\(namespace): \"silent\", \"echo\" or an object of type → reply")
                }
            }
        } else if object["app"] != nil {
            throw HarnessScriptError("app: an object of namespace → \"silent\" | \"echo\" | {type: reply}")
        }
        guard case .array(let steps)? = object["steps"], !steps.isEmpty else { throw HarnessScriptError("steps: a non-empty array is required") }
        for (index, step) in steps.enumerated() {
            do { script.steps.append(try Self.step(step)) } catch { throw HarnessScriptError("steps[\(index)]: \(error.reason)") }
        }
        return script
    }

    private static func step(_ value: JSONValue) throws(HarnessScriptError) -> Step {
        guard case .object(let o) = value else { throw HarnessScriptError("a step is an object") }
        let within = o["within"]?.double ?? 2
        guard within > 0, within <= 60 else { throw HarnessScriptError("within: seconds in (0, 60]") }
        if let command = o["command"] {
            let expect = o["expect"]
            let timeout = o["timeout"]?.double ?? 5
            guard timeout > 0, timeout <= 60 else { throw HarnessScriptError("timeout: seconds in (0, 60]") }
            return .command(command, reply: expect?["reply"], error: expect?["error"]?.string, timeout: timeout)
        }
        if let payload = o["app_sends"] { return .appSends(payload, namespace: o["namespace"]?.string) }
        if let payload = o["expect_sent"] { return .expectSent(payload, namespace: o["namespace"]?.string, within: within) }
        if case .object(let r)? = o["expect_record"] {
            return .expectRecord(
                RecordPattern(
                    className: r["class"]?.string, level: r["level"]?.string, message: r["message"]?.string,
                    fields: r["fields"]), within: within)
        }
        if let name = o["app"]?.string {
            guard let action = AppAction(rawValue: name) else {
                throw HarnessScriptError("app: one of \(AppAction.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return .app(action)
        }
        throw HarnessScriptError("a step is one of command, app_sends, expect_sent, expect_record, app")
    }

    /// `expected` is contained in `actual`: every key of an object (recursively), arrays and
    /// scalars equal.
    package static func contains(_ actual: JSONValue, _ expected: JSONValue) -> Bool {
        switch (actual, expected) {
        case (.object(let a), .object(let e)):
            return e.allSatisfy { key, value in a[key].map { contains($0, value) } ?? false }
        default:
            return actual == expected
        }
    }
}

package struct HarnessScriptError: Error, Equatable, CustomStringConvertible {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}
