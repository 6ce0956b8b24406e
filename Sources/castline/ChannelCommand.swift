import ArgumentParser
import CastCore
import CastlineDaemon

/// `castline channel send|request|listen`: a custom namespace on a device, through the running
/// daemon: the channel plugin that declares the namespace, or a plain channel the config allows.
struct ChannelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel", abstract: "Send to, ask and listen on a custom namespace (through the daemon).",
        discussion: """
            A namespace goes through the channel plugin that declares it (the message is the plugin's command; \
            its answer is the reply) or, when channels.allowed_namespaces lists it, a plain channel (a request \
            gets a requestId and waits for the message with the same id). --app launches the receiver app first \
            when it does not run.
            """ + "\n" + CastlineExit.summary,
        subcommands: [Send.self, Request.self, Listen.self])

    struct Target: ParsableArguments {
        @OptionGroup var daemon: DaemonOptions
        @Option(name: .long, help: "The device: a name, alias, device id or host[:port].") var device: String
        @Option(name: .long, help: "The namespace (urn:x-cast:…).") var namespace: String
        @Option(name: .long, help: "The receiver app to launch first when it does not run.") var app: String?

        var path: String { DaemonClient.path(device, "channels/" + DaemonClient.percentEncoded(namespace)) }

        func body(message: String?, wait: Bool, timeout: Double? = nil, listen: Bool = false) -> JSONValue {
            var object = JSONObject()
            if let message { object.set("message", (try? JSONValue.parse(message)).flatMap { $0.object.map(JSONValue.object) } ?? .string(message)) }
            if wait { object.set("wait", true) }
            if let timeout { object.set("timeout", .double(timeout)) }
            if listen { object.set("listen", true) }
            if let app { object.set("app", .string(app)) }
            return .object(object)
        }
    }

    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "send", abstract: "Send a message (a JSON object or text).")
        @OptionGroup var target: Target
        @Argument(help: "The message: a JSON object, or any text.") var message: String

        func run() throws {
            let answer = try target.daemon.daemon(for: "channel").send("POST", target.path, body: target.body(message: message, wait: false))
            printLine(target.daemon.json ? answer.serialized() : (answer["reply"]?.serialized() ?? "sent"))
        }
    }

    struct Request: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "request", abstract: "Send a request and print its reply.")
        @OptionGroup var target: Target
        @Argument(help: "The request: a JSON object.") var message: String
        @Option(name: .long, help: "Seconds to wait for the reply (default 10).") var timeout: Double?

        func run() throws {
            let answer = try target.daemon.daemon(for: "channel").send("POST", target.path, body: target.body(message: message, wait: true, timeout: timeout))
            printLine(target.daemon.json ? answer.serialized() : (answer["reply"]?.serialized() ?? "null"))
        }
    }

    struct Listen: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "listen", abstract: "Print the app's messages on the namespace as they come.")
        @OptionGroup var target: Target
        @Option(name: .customLong("for"), help: "Stop after this many seconds.") var duration: Double?

        func run() throws {
            let daemon = try target.daemon.daemon(for: "channel")
            let opened = try daemon.send("POST", target.path, body: target.body(message: nil, wait: false, listen: true))
            let device = try daemon.send("GET", DaemonClient.path(target.device))["id"]?.string ?? target.device
            _ = opened
            do {
                try daemon.client.stream("/v1/events?kinds=channel", for: duration) { line in
                    guard line.hasPrefix("data: "), let event = try? JSONValue.parse(String(line.dropFirst(6))),
                          event["device"]?.string == device, event["namespace"]?.string == target.namespace else { return true }
                    printLine(target.daemon.json ? event.serialized() : (event["message"]?.serialized() ?? ""))
                    return true
                }
            } catch {
                printError("castline channel listen: \(error)")
                throw CastlineExit.failure
            }
        }
    }
}
