import ArgumentParser

/// `castline`: a headless Google Cast sender for Linux. This file is the command tree; each
/// subcommand lives in its own file.
@main
struct Castline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castline",
        abstract: "A headless Google Cast sender for Linux servers.",
        discussion: """
            Exit codes: 0 success; 1 runtime failure (a socket could not be bound, a daemon is
            missing, discover found nothing); 64 usage or configuration error (EX_USAGE; the
            message says what is wrong, with file:line:column for files).
            Logging: --log RULES or CASTLINE_LOG, e.g. "*:info,CastChannel.*heartbeat:none,*Session:verbose".
            """,
        subcommands: [SimCommand.self, DiscoverCommand.self]
    )
}
