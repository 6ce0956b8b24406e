import ArgumentParser
import CastlineDaemon

/// `castline`: a headless Google Cast sender for Linux. This file is the command tree; each
/// subcommand lives in its own file.
@main
struct Castline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castline",
        abstract: "A headless Google Cast sender for Linux servers.",
        discussion: CastlineExit.summary + """

            Logging: --log RULES or CASTLINE_LOG, e.g. "*:info,CastChannel.*heartbeat:none,*Session:verbose".
            Config: --config FILE, CASTLINE_CONFIG, or ~/.config/castline/castline.yaml (see configs/castline.example.yaml).
            """,
        version: CastlineVersion.string,
        subcommands: [
            CastCommand.self, ProbeCommand.self, SiteCommand.self, AnnounceCommand.self, StatusCommand.self, PlayCommand.self, PauseCommand.self, StopCommand.self, SeekCommand.self,
            VolumeCommand.self, MuteCommand.self, QueueCommand.self, RunCommand.self, DiscoverCommand.self, ConfigCommand.self, SimCommand.self,
            PluginsCommand.self, DoctorCommand.self, LogsCommand.self, NearbyCommand.self, JobsCommand.self, ChannelCommand.self,
            LogLevelCommand.self, FleetCommand.self, CaptureCommand.self, PluginScanCommand.self, PluginHostCommand.self,
            APICommand.self,
        ]
    )
}
