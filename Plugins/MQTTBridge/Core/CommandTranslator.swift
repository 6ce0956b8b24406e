import CastJSON

/// An MQTT command (the JSON on a `set` topic) → the control-API request it stands for. The
/// request then goes through the daemon's control plane like any API call; nothing here talks
/// to a device.
///
/// Device commands: `{"id": CORRELATION, "command": "cast"|"play"|"pause"|"stop"|"seek"|"volume"|
/// "mute"|"site"|"announce"|"queue"|"channel"|"job", …arguments as the API takes them}`
/// (`channel` also takes `namespace`; `job` takes `job`, a job name, or `none`).
/// Job commands: `{"id": CORRELATION, "op": "put", "job": {…}}` or `{"id": …, "op": "delete"}`.
package enum CommandTranslator {
    package static let maxPayload = 64 * 1024
    package static let deviceCommands = ["cast", "play", "pause", "stop", "seek", "volume", "mute", "site", "announce", "queue", "channel", "job"]

    /// What a command asks for: API requests (a `job` selection needs two: read, then write).
    package enum Plan: Equatable {
        case request(JSONValue)
        /// Put `device` into job `name` (GET the job, then PUT its definition with this device).
        case assignJob(name: String, device: String)
    }

    /// Why a command is refused before anything is sent: an API-shaped error.
    package struct Refusal: Error, Equatable {
        package let code: String
        package let message: String
        package init(code: String, message: String) {
            self.code = code
            self.message = message
        }
        package var json: JSONValue { ["error": ["code": .string(code), "message": .string(message)]] }
    }

    /// How old a command with `issued_at` may be, and how far ahead of this clock, in seconds.
    package static let maximumAge: Double = 60

    /// The payload parsed and size-checked; the correlation id comes along even when the rest is
    /// bad. `size`: the payload's size as the broker gave it (a payload over the limit arrives
    /// empty, never copied). A command with `expires` (Unix seconds) is refused after it, one with
    /// `issued_at` (Unix seconds) when it is more than ``maximumAge`` old or ahead: a command
    /// replayed later does nothing.
    package static func parse(_ payload: [UInt8], size: Int? = nil, now: Double) -> (correlation: JSONValue, object: JSONObject?, refusal: Refusal?) {
        let size = size ?? payload.count
        guard size <= maxPayload else {
            return (.null, nil, Refusal(code: "payload_too_large", message: "the command is \(size) bytes; at most \(maxPayload)"))
        }
        let value: JSONValue
        do { value = try JSONValue.parse(bytes: payload) } catch {
            return (.null, nil, Refusal(code: "bad_json", message: "the command is not JSON: \(error)"))
        }
        guard case .object(var object) = value else {
            return (.null, nil, Refusal(code: "not_an_object", message: "the command must be a JSON object"))
        }
        let correlation = object["id"] ?? .null
        if let expires = object["expires"] {
            guard let at = expires.double else {
                return (correlation, nil, Refusal(code: "bad_expires", message: "expires must be a time in Unix seconds"))
            }
            if now > at { return (correlation, nil, Refusal(code: "expired", message: "the command expired \(Int(now - at)) s ago (expires \(Int(at)))")) }
        }
        if let issued = object["issued_at"] {
            guard let at = issued.double else {
                return (correlation, nil, Refusal(code: "bad_issued_at", message: "issued_at must be a time in Unix seconds"))
            }
            if now - at > maximumAge {
                return (correlation, nil, Refusal(code: "expired", message: "the command was issued \(Int(now - at)) s ago; commands older than \(Int(maximumAge)) s are refused"))
            }
            if at - now > maximumAge {
                return (correlation, nil, Refusal(code: "bad_issued_at", message: "the command is issued \(Int(at - now)) s in the future; check the sender's clock"))
            }
        }
        object.remove("expires")
        object.remove("issued_at")
        return (correlation, object, nil)
    }

    package static func device(_ deviceID: String, _ command: JSONObject) -> Result<Plan, Refusal> {
        guard let name = command["command"]?.string else {
            return .failure(Refusal(code: "missing_command", message: "a device command needs \"command\": \(deviceCommands.joined(separator: ", "))"))
        }
        guard deviceCommands.contains(name) else {
            return .failure(Refusal(code: "unknown_command", message: "no device command \"\(name)\" (\(deviceCommands.joined(separator: ", ")))"))
        }
        var body = JSONObject()
        for key in command.keys where key != "id" && key != "command" { body.set(key, command[key]!) }
        let device = percentEncoded(deviceID)
        switch name {
        case "channel":
            guard let namespace = body["namespace"]?.string, namespace.hasPrefix("urn:x-cast:") else {
                return .failure(Refusal(code: "missing_namespace", message: "channel needs \"namespace\": \"urn:x-cast:…\""))
            }
            _ = body.remove("namespace")
            return .success(.request(["method": "POST", "path": .string("/v1/devices/\(device)/channels/\(percentEncoded(namespace))"), "body": .object(body)]))
        case "job":
            guard let job = body["job"]?.string, !job.isEmpty else {
                return .failure(Refusal(code: "missing_job", message: "job needs \"job\": a job name, or \"none\""))
            }
            if job == "none" { return .success(.request(["method": "POST", "path": .string("/v1/devices/\(device)/stop"), "body": [:]])) }
            return .success(.assignJob(name: job, device: deviceID))
        default:
            return .success(.request(["method": "POST", "path": .string("/v1/devices/\(device)/\(name)"), "body": .object(body)]))
        }
    }

    package static func job(_ name: String, _ command: JSONObject) -> Result<Plan, Refusal> {
        let op = (command["op"]?.string ?? command["method"]?.string ?? "").lowercased()
        let path = JSONValue.string("/v1/jobs/\(percentEncoded(name))")
        switch op {
        case "put":
            guard let job = command["job"], case .object = job else {
                return .failure(Refusal(code: "missing_job", message: "put needs \"job\": {\"devices\": [...], \"media\": {...}}"))
            }
            return .success(.request(["method": "PUT", "path": path, "body": job]))
        case "delete":
            return .success(.request(["method": "DELETE", "path": path]))
        default:
            return .failure(Refusal(code: "bad_op", message: "a job command needs \"op\": \"put\" or \"delete\""))
        }
    }

    /// The PUT that puts `device` into job `name`, from the job's GET answer.
    package static func assignment(of device: String, toJob name: String, from job: JSONValue) -> Result<JSONValue, Refusal> {
        guard case .object(var definition)? = job["definition"] else {
            return .failure(Refusal(code: "bad_job", message: "job \(name) has no definition"))
        }
        definition.set("devices", [.string(device)])
        _ = definition.remove("name")
        return .success(["method": "PUT", "path": .string("/v1/jobs/\(percentEncoded(name))"), "body": .object(definition)])
    }

    /// The result message for a correlation id and an API answer.
    package static func result(correlation: JSONValue, status: Int, body: JSONValue) -> JSONValue {
        var o = JSONObject()
        o.set("id", correlation)
        o.set("ok", .bool((200..<300).contains(status)))
        o.set("status", .int(Int64(status)))
        if (200..<300).contains(status) { o.set("result", body) } else { o.set("error", body["error"] ?? body) }
        return .object(o)
    }

    /// One path segment, percent-encoded (unreserved bytes kept).
    package static func percentEncoded(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            let keep = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
            if keep { out.unicodeScalars.append(Unicode.Scalar(b)) } else {
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(b >> 4)]) + String(hex[Int(b & 15)])
            }
        }
        return out
    }
}
