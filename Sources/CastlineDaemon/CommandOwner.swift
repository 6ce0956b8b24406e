/// The owner names of casts made through the hub's commands: `command` (`castline cast`, the
/// API, MQTT) and `announcement` (held until the announcement gives the device back).
package enum CommandOwner {
    package static let name = "command"
    package static let announcement = "announcement"

    /// A command's or an announcement's: jobs yield to it whatever their takeover policy.
    package static func isCommand(_ owner: String?) -> Bool { owner == name || owner == announcement }
}

/// How a site job's page is sent: with force (the page cannot be framed, or is http), and its title.
struct PageSettings: Sendable {
    var force: Bool
    var title: String?
}
