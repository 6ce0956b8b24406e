import ArgumentParser
import CastCore
import CastlineDaemon

/// `castline site URL --device X`: a web page on a TV through DashCast, or (`--dashboard`) a
/// Home Assistant dashboard through Home Assistant Cast.
struct SiteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "site",
        abstract: "Show a web page (DashCast) or a Home Assistant dashboard on a device.",
        discussion: """
            The page is checked first: one that cannot be fetched (or answers an HTTP error) fails before \
            anything is launched; one that refuses to be framed (X-Frame-Options, CSP frame-ancestors), or an \
            http page (DashCast's receiver is https: mixed content), is sent with force, which navigates the \
            receiver to the page itself, and the line says why. --no-force keeps it framed anyway.
            --dashboard VIEW shows a view of the Home Assistant instance that the web-pages plugin is \
            configured for (plugins.config.web-pages.home_assistant: url, uuid, token_file).
            The page stays until something else is cast or the device stops the app (most stop apps that \
            play no media after about 10 minutes): a job with site: keeps it up.
            """ + "\n" + CastlineExit.summary)

    @Argument(help: "An http(s) URL (leave out with --dashboard).") var url: String?
    @OptionGroup var options: ControlOptions
    @Flag(inversion: .prefixedNo, help: "Navigate the receiver to the page instead of framing it (default: the check decides).")
    var force: Bool?
    @Option(name: .long, help: "Seconds between reloads of the page (0: never; not with force).") var reloadEvery: Double = 0
    @Flag(name: .long, help: "Send the URL without checking the page first.") var noCheck = false
    @Option(name: .long, help: "A Home Assistant dashboard view (its path, e.g. lobby).") var dashboard: String?
    @Option(name: .long, help: "The Home Assistant dashboard's URL path (default: the default dashboard).") var urlPath: String?

    func validate() throws {
        if (url == nil) == (dashboard == nil && urlPath == nil) {
            throw ValidationError("give a URL, or --dashboard VIEW (a Home Assistant view), not both")
        }
    }

    var body: JSONValue {
        if url == nil {
            var view = JSONObject()
            if let dashboard { view.set("view_path", .string(dashboard)) }
            if let urlPath { view.set("url_path", .string(urlPath)) }
            return ["home_assistant": .object(view)]
        }
        var object = JSONObject()
        object.set("url", .string(url ?? ""))
        if let force { object.set("force", .bool(force)) }
        if reloadEvery != 0 { object.set("reload_every", .double(reloadEvery)) }
        if noCheck { object.set("preflight", .bool(false)) }
        return .object(object)
    }

    func run() async throws {
        // Checked here as the hub checks it, so a typo fails before any connection.
        do { _ = try SiteArguments(json: body) } catch {
            throw CommandOutput.exit(error)
        }
        let target = try options.target(featureKinds: [.channel])
        do {
            _ = try await target.run(action: "site", body: body, device: options.device.device, json: options.json)
        } catch {
            await target.close()
            throw error
        }
        await target.close()
    }
}
