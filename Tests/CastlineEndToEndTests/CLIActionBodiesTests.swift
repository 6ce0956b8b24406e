import CastCore
import CastlineDaemon
@testable import castline
import Testing

/// The bodies the CLI's device commands send (through the daemon or the hub in its process) use
/// the route table's action names and field names, and each decodes by its row: a field renamed in
/// the table and not in the command (or the other way round) fails here.
@Suite struct CLIActionBodiesTests {
    static func check(_ action: String, _ body: JSONValue?, _ label: String) throws {
        let route = try #require(ControlAction.deviceActions.first { $0.name == action } ?? (action == "channel" ? ControlAction.channel.route : nil),
                                 "\(label): \(action) is no action of the table")
        for key in body?.object?.keys ?? [] { #expect(route.body.fieldNames.contains(key), "\(label): \(key) is no field of \(action)") }
        let segments = action == "channel" ? ["v1", "devices", "Kitchen", "channels", "urn:x-cast:com.example"] : ["v1", "devices", "Kitchen", action]
        let decoded = ControlAction.resolve(method: "POST", segments: segments, body: body.map { Array($0.serialized().utf8) } ?? [])
        guard case .success(.command(let command)) = decoded else {
            Issue.record("\(label): \(decoded)")
            return
        }
        #expect(command.action == route.action, "\(label)")
    }

    @Test func deviceControlCommandsSendTheTablesNamesAndFields() throws {
        let commands: [(any DeviceControlCommand, String)] = [
            (try PlayCommand.parse([]), "play"), (try PauseCommand.parse([]), "pause"),
            (try StopCommand.parse(["--app"]), "stop --app"), (try SeekCommand.parse(["1:30"]), "seek"),
            (try VolumeCommand.parse(["+10", "--stream"]), "volume"), (try MuteCommand.parse(["--off", "--stream"]), "mute"),
            (try QueueCommand.parse(["repeat", "all"]), "queue repeat"), (try QueueCommand.parse(["remove", "1", "2"]), "queue remove"),
            (try QueueCommand.parse(["next"]), "queue next"),
        ]
        for (command, label) in commands { try Self.check(command.request.name, command.request.body, label) }
    }

    @Test func siteAndChannelSendTheTablesFields() throws {
        try Self.check("site", try SiteCommand.parse(["http://dash.local/", "--no-force", "--reload-every", "60", "--no-check"]).body, "site")
        try Self.check("site", try SiteCommand.parse(["--dashboard", "lobby", "--url-path", "lovelace"]).body, "site --dashboard")
        let target = try ChannelCommand.Target.parse(["--device", "Kitchen", "--namespace", "urn:x-cast:com.example", "--app", "CC1AD845"])
        try Self.check("channel", target.body(message: #"{"type": "HI"}"#, wait: true, timeout: 5), "channel request")
        try Self.check("channel", target.body(message: nil, wait: false, listen: true), "channel listen")
    }
}
