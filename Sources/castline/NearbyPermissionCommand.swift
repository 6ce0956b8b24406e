import ArgumentParser
import CastCore
import CastNearby

/// `castline nearby permission grant|revoke|status`.
struct NearbyPermissionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permission",
        abstract: "Grant, revoke or show the nearby permission (running publishers and subscribers follow within a second).",
        discussion: "Exit codes: 0; 1 when the permission file cannot be written (the reason is printed).")

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case grant, revoke, status
    }

    @OptionGroup var options: NearbyOptions

    @Argument(help: "grant, revoke or status.")
    var action: Action

    func run() async throws {
        let config = try options.loadConfig()
        let logSystem = try options.makeLogSystem(config)
        defer { _ = logSystem.shutdown() }
        let store = NearbyPermissionStore(directory: options.stateDirectory(config), logSystem: logSystem)
        do {
            switch action {
            case .grant: try store.grant()
            case .revoke: try store.revoke()
            case .status: break
            }
        } catch {
            printError("castline: nearby permission \(action.rawValue): \(error)")
            throw CastlineExit.failure
        }
        let permission = store.permission
        if options.json {
            var o: JSONObject = ["permission": .string(permission.word), "path": .string(store.path)]
            if let problem = store.problem { o.set("problem", .string(problem)) }
            printLine(JSONValue.object(o).serialized())
        } else {
            printLine("nearby permission: \(permission.word) (\(store.path))")
            if let problem = store.problem { printError("castline: \(problem)") }
        }
    }
}
