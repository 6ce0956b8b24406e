import CastCore

/// castline's configuration file (YAML), decoded and checked. Every value has a default, so an
/// empty file is a valid configuration; the schema is documented in `configs/castline.example.yaml`
/// and README.md. Decoding lives in `CastlineConfiguration+Decoding.swift`.
public struct CastlineConfiguration: Sendable {
    /// The file this came from ("<default>" for the built-in default).
    public var file: String = "<default>"
    /// The receiver app jobs and `cast` launch or join (Default Media Receiver unless set).
    public var receiverAppID = "CC1AD845"
    /// The sender id used in Cast messages (`sender-0` unless set).
    public var senderID: String?
    public var devices: [DeviceEntry] = []
    public var discovery = DiscoverySettings()
    public var logging = LoggingSettings()
    public var plugins = PluginSettings()
    public var channels = ChannelSettings()
    public var session = SessionSettings()
    public var daemon = DaemonSettings()
    public var api = APISettings()
    public var nearby = NearbySettings()
    /// The MQTT bridge; nil (no `mqtt:` section): nothing connects.
    public var mqtt: MQTTSettings?
    public var media = MediaSettings()
    public var jobs: [JobEntry] = []
    /// Where each job's device globs and media URL are in the file, by job name (kept beside
    /// the jobs so that a job compares equal wherever it sits in the file).
    public var jobMarks: [String: JobSourceMarks] = [:]

    public init() {}
}

/// A device reached by address (no mDNS needed), with the names it may be called by.
public struct DeviceEntry: Sendable, Hashable {
    public var name: String
    public var host: String
    public var port = 8009
    /// The device's uuid when known (otherwise learnt from the device).
    public var id: String?
    /// Other names `--device` and jobs may use for this device.
    public var aliases: [String] = []
    /// The device's model (`devices[].model`, e.g. "Google Nest Hub"): wins over the model its
    /// eureka_info gives; nil: the device's own. `daemon.idle_timeouts` is matched against it.
    public var model: String?
    public var mark = SourceMark(line: 0, column: 0)

    public init(name: String, host: String, port: Int = 8009, id: String? = nil, aliases: [String] = [], model: String? = nil) {
        self.name = name
        self.host = host
        self.port = port
        self.id = id
        self.aliases = aliases
        self.model = model
    }
}

public struct DiscoverySettings: Sendable {
    /// Start discovery when castline starts (`false`: only the static devices are used).
    public var autostart = true
    /// Which providers run: `static` (the `devices:` list) and discovery plugin ids
    /// (`avahi-discovery`). Nil: all of them.
    public var providers: [String]?
    /// DNS-SD service types discovery plugins may browse (the declaration check).
    public var allowedServices: [String] = ["_googlecast._tcp"]
    /// Network interfaces discovery may use (handed to the Avahi plugin); empty: all.
    public var interfaces: [String] = []
    /// How long `cast` and jobs wait for a named device to be discovered, in seconds.
    public var timeout: Double = 5

    public init() {}

    /// Whether `providers` lets a provider known by any of `names` run (a plugin provider is
    /// known by its feature id, its plugin id and `plugin/feature`; the devices list by `static`).
    /// No list: every provider runs.
    public func allows(_ names: [String]) -> Bool {
        guard let providers, !providers.isEmpty else { return true }
        return names.contains { providers.contains($0) }
    }
}

public struct LoggingSettings: Sendable {
    /// Rules in the `CASTLINE_LOG` grammar (`*:info,CastChannel.*heartbeat:none`).
    public var rules: String?
    /// Console (stderr) output on or off.
    public var console = true
    /// The console's lines: `short` (time, level, class, message; fields and location on debug
    /// records) or `detailed` (UTC time, fields and location on every record).
    public var consoleFormat = "short"
    public var sinks: [SinkEntry] = []
    /// Whether commands other than `castline run` write to ``sinks`` too (default: no; the
    /// console only). The daemon's files and journal then hold the daemon's records, and a
    /// command that is asked to write there names itself in each record (`pid`, `role: cli`).
    public var cliSinks = false

    public init() {}
}

/// A log sink provided by a plugin feature (`json`, `journald`), with its options as JSON.
public struct SinkEntry: Sendable, Hashable {
    public var type: String
    /// The options object as JSON text.
    public var options = "{}"
    public var mark = SourceMark(line: 0, column: 0)

    public init(type: String, options: String = "{}") {
        self.type = type
        self.options = options
    }
}

public struct PluginSettings: Sendable {
    /// Folders or `.so` files searched after `--plugin-path` and `CASTLINE_PLUGIN_PATH`.
    public var paths: [String] = []
    /// Plugin ids not to initialise.
    public var disabled: [String] = []
    /// Each plugin's config object as JSON text, by plugin id.
    public var configs: [String: String] = [:]
    /// Seconds a call into a plugin may take (`plugins.call_timeout`): the scan's init in its
    /// child process, and every callback.
    public var callTimeout: Double = 5
    /// Plugin ids whose `.so` runs in a helper process (`plugins.isolated`) even when it ships
    /// with castline: a crash there is logged and the plugin restarted, castline goes on.
    public var isolated: [String] = []
    /// Plugin ids that do not ship with castline but run in its process all the same
    /// (`plugins.in_process`); every other such plugin runs isolated.
    public var inProcess: [String] = []
    /// What each isolated plugin's helper process may use (`plugins.limits`).
    public var limits = PluginLimits()
    public var marks: [String: SourceMark] = [:]

    public init() {}
}

/// `plugins.limits`: the bounds on each isolated plugin's helper process. Going over one is
/// logged with the limit's name, and the helper is restarted.
public struct PluginLimits: Sendable, Equatable {
    /// Resident memory, in MiB.
    public var memoryMB = 256
    /// CPU seconds the helper may use in any one minute (60: a whole core).
    public var cpuSeconds = 30.0
    /// Open file descriptors (RLIMIT_NOFILE).
    public var openFiles = 256
    public init() {}
}

public struct ChannelSettings: Sendable {
    /// Custom namespaces channel plugins may use (`channels.allowed_namespaces`).
    public var allowedNamespaces: [String] = []

    /// DashCast's, Home Assistant Cast's and castline's receiver's namespaces (the first-party web-pages plugin's
    /// channels): always allowed, besides the config's.
    public static let webPageNamespaces = ["urn:x-cast:com.madmod.dashcast", "urn:x-cast:com.nabucasa.hast", CastlineReceiver.namespace]

    /// The namespaces in force: the config's and the web-page apps'.
    public var permitted: Set<String> { Set(allowedNamespaces).union(Self.webPageNamespaces) }

    public init() {}
}

public struct SessionSettings: Sendable {
    public enum DeviceAuth: String, Sendable, CaseIterable { case off, warn, require }

    /// Where sessions are saved so a restarted castline resumes them.
    public var resumeFile: String?
    public var heartbeatInterval: Double = 5
    public var heartbeatTimeout: Double = 10
    public var connectTimeout: Double = 5
    public var requestTimeout: Double = 10
    /// Reconnect attempts after a drop; nil: unlimited.
    public var reconnectMaxAttempts: Int?
    public var reconnectInitialDelay: Double = 0.05
    public var reconnectMaxDelay: Double = 10
    public var deviceAuth = DeviceAuth.off
    /// PEM files with extra trust anchors for device authentication.
    public var trustAnchors: [String] = []

    public init() {}
}

public struct DaemonSettings: Sendable {
    public enum OnStop: String, Sendable, CaseIterable { case leave, stop }

    /// On SIGTERM: `leave` the receiver apps running, or `stop` castline's own casts (never
    /// another sender's).
    public var onStop = OnStop.leave
    /// A job removed at run time (API, SIGHUP): `stop` its cast, or `leave` it playing.
    public var onJobRemoved = OnStop.stop
    /// Where jobs added through the API are kept (nil: `jobs.json` in the state folder).
    public var jobsFile: String?
    /// Device models (globs over the model name) with the idle timeout their receivers apply to
    /// apps without media, in seconds (`daemon.idle_timeouts`); the first match wins. Site jobs
    /// without their own `idle_timeout` keep their page up by it.
    public var idleTimeouts: [(model: String, seconds: Double)] = []
    /// Device models (globs over the model name) with what castline assumes of their field
    /// behaviour (`daemon.field_profiles`): a built-in profile, and overrides on top. The first
    /// match wins; without one, the model name picks the profile (``FieldProfile/forModel(_:isVideoDevice:)``).
    public var fieldProfiles: [FieldProfileOverride] = []
    /// Divides every duration castline takes from a field profile (`daemon.field_time_scale`):
    /// for a test against a simulator run with `--field-time-scale`, never for real devices.
    public var fieldTimeScale: Double = 1
    /// The app id the operator registered castline's receiver page under (`daemon.castline_receiver_app_id`):
    /// page jobs with `receiver: castline` launch it.
    public var castlineReceiverAppID: String?

    public init() {}
}

/// One `daemon.field_profiles` entry: `"MODEL GLOB": PROFILE`, or a mapping with `profile`,
/// `idle_timeout` (seconds, or `never`) and `idle_reset_by` (`media` or `any-message`).
public struct FieldProfileOverride: Sendable, Hashable {
    public var model: String
    /// A built-in profile's name (nil: the model's own).
    public var profile: String?
    /// Set: the idle timeout of apps without media (`.some(nil)`: the device never closes them).
    public var idleTimeout: Double??
    public var idleResetBy: FieldProfile.IdleReset?

    public init(model: String, profile: String? = nil, idleTimeout: Double?? = nil, idleResetBy: FieldProfile.IdleReset? = nil) {
        self.model = model
        self.profile = profile
        self.idleTimeout = idleTimeout
        self.idleResetBy = idleResetBy
    }
}

/// The control API of `castline run` (docs/api.md).
public struct APISettings: Sendable {
    /// The Unix socket (nil: `$RUNTIME_DIRECTORY/castline.sock`, else `/run/castline/castline.sock`
    /// as root or `$XDG_RUNTIME_DIR/castline.sock`).
    public var socket: String?
    /// An optional TCP listener, `host:port` (bearer token required).
    public var listen: String?
    /// The bearer token for TCP clients; the file must not be readable by others (mode 0600).
    public var tokenFile: String?
    /// TLS for the TCP listener: PEM certificate chain and private key.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// Seconds a connection may stay silent mid-request or between requests before it is closed.
    public var readTimeout: Double = 30
    public var mark = SourceMark(line: 0, column: 0)

    public init() {}
}

/// Nearby messages (`castline nearby`, and job announcements by `castline run`).
public struct NearbySettings: Sendable {
    /// The folder holding the nearby permission (nil: $CASTLINE_STATE_DIR, $STATE_DIRECTORY,
    /// $XDG_STATE_HOME/castline, ~/.local/state/castline).
    public var stateDir: String?
    /// Only these interfaces count (availability, results); empty: every multicast interface.
    public var interfaces: [String] = []
    /// `castline run` publishes each job's state per device (type `castline.job`).
    public var announceJobs = false
    /// The namespace of the job announcements.
    public var namespace = "castline"
    public var mark = SourceMark(line: 0, column: 0)

    public init() {}
}

/// Declarative casting: keep `media` playing on every device matching `devices`.
public struct JobEntry: Sendable, Hashable {
    public enum ScreenOffPolicy: String, Sendable, CaseIterable { case report, wake }
    public enum Trigger: String, Sendable, CaseIterable { case idle, reboot, found }
    public enum Takeover: String, Sendable, CaseIterable {
        /// Leave the device to the other sender; cast again when it goes idle (or after `reclaim_after`).
        case yield
        /// Cast again at once.
        case reclaim
    }

    public var name: String
    /// Globs over device names, aliases and ids (`Lobby*`).
    public var devices: [String]
    /// The receiver app (default: the top-level `receiver_app_id`).
    public var appID: String?
    /// What the job casts. For a site job, the site's URL as `text/html` (what the job shows).
    public var media: MediaEntry
    /// A web page kept on the devices through DashCast, instead of media.
    public var site: SiteEntry?
    /// Dayparting: the entries' times (in `timezone`), each with what it shows
    /// (``scheduled``, in the same order), and what shows outside them (nil: nothing, the device
    /// is left idle). Without a schedule, `media`/`site` always show.
    public var schedule: Schedule?
    public var scheduled: [Content] = []
    public var fallback: Content?
    /// An announce job: plays this announcement (when run, or at its times) on the devices and
    /// restores each, instead of keeping media playing. `media` then names the announcement.
    public var announcement: AnnouncementEntry?

    /// What a schedule entry (or the fallback) shows: media or a site.
    public struct Content: Sendable, Hashable {
        public var media: MediaEntry?
        public var site: SiteEntry?
        public init(media: MediaEntry? = nil, site: SiteEntry? = nil) {
            self.media = media
            self.site = site
        }
    }

    /// This job showing `content` instead of its own media or site.
    public func showing(_ content: Content) -> JobEntry {
        var job = self
        job.schedule = nil
        job.site = content.site
        if let media = content.media {
            job.media = media
        } else if let site = content.site {
            job.media = MediaEntry(page: site)
        }
        return job
    }
    /// When to cast again: the player went idle (finished, error, app stopped), the device came
    /// back after a reboot or drop, the device was lost and found again.
    public var recastOn: Set<Trigger> = Set(Trigger.allCases)
    public var takeover = Takeover.yield
    /// What to do when the device's screen does not show the job's app (covered, in standby, on
    /// another input): `report` it only, or `wake` it by launching the app again (a LAUNCH lifts
    /// ambient mode and, over HDMI-CEC, turns the TV on and takes its input).
    public var screenOff = ScreenOffPolicy.report
    /// With `takeover: yield`, reclaim the device after this many seconds even if it stays busy.
    public var reclaimAfter: Double?
    /// Seconds between checks that the media still plays (a status request).
    public var checkInterval: Double = 30
    /// Seconds to wait before casting again after a failure (doubles up to 16×).
    public var retryDelay: Double = 2
    /// A video wall: the devices play `media` in step, started at one instant and kept together
    /// (docs/sync.md), instead of each on its own.
    public var sync = false
    public var mark = SourceMark(line: 0, column: 0)

    public init(name: String, devices: [String], media: MediaEntry) {
        self.name = name
        self.devices = devices
        self.media = media
    }
}

/// A web page a job keeps on its devices (`site:`): shown with DashCast, re-sent before the
/// device's idle timeout stops the app, and shown again as soon as the app stops.
public struct SiteEntry: Sendable, Hashable {
    /// Seconds a receiver lets an app that plays no media run: about 10 minutes on the Nest Hubs
    /// and Chromecasts users report (DashCast #12, HA frontend #5729); some stop it after 30 s,
    /// which `idle_timeout` then says.
    public static let defaultIdleTimeout = 600.0

    public var url: String
    /// nil: the pre-flight decides (a page that refuses frames, or an http page, is forced).
    public var force: Bool?
    /// Seconds between DashCast's reloads of the page (0: never).
    public var reloadEvery: Double = 0
    /// The device's idle timeout for apps without media (nil: by the device's model from
    /// `daemon.idle_timeouts`, else ``defaultIdleTimeout``).
    public var idleTimeout: Double?
    /// Check the page before each cast (reachable; framing).
    public var preflight = true
    /// The receiver app that shows the page: DashCast, or castline's own receiver page (hosted
    /// by the operator, under `daemon.castline_receiver_app_id`), which keeps itself alive.
    public var receiver = Receiver.dashcast
    public var receiverMark: SourceMark?

    public enum Receiver: String, Sendable, CaseIterable { case dashcast, castline }

    public init(url: String) { self.url = url }

    /// Seconds between keep-alives for an idle timeout: a minute before it, or two thirds of a short one.
    public static func keepAliveInterval(idleTimeout: Double) -> Double { idleTimeout > 90 ? idleTimeout - 60 : idleTimeout * 2 / 3 }
}

/// What to cast: a URL with optional metadata (filled from the media-formats plugin when omitted).
public struct MediaEntry: Sendable, Hashable {
    public enum StreamType: String, Sendable, CaseIterable { case buffered, live, none }

    public var url: String
    public var contentType: String?
    public var streamType: StreamType?
    public var title: String?
    public var subtitle: String?
    public var studio: String?
    public var image: String?
    public var autoplay = true
    /// A playlist: the items in order (`media: [a, b, c]`, or `items:`); nil with a folder or an
    /// M3U file as `url`, which the hub expands when it casts.
    public var items: [String]?
    /// A folder's files: only these extensions (lowercase, no dot).
    public var extensions: [String]?
    /// A playlist's repeat mode: `off`, `all` (the default for a playlist), `single`, `shuffle`.
    public var repeatMode: RepeatChoice?

    public enum RepeatChoice: String, Sendable, CaseIterable { case off, all, single, shuffle }

    public init(url: String) { self.url = url }

    /// What a site job shows, as media: the page's URL as `text/html`.
    public init(page site: SiteEntry) {
        url = site.url
        contentType = "text/html"
    }

    /// Several items, a folder, or an M3U file: a queue, not one media.
    public var isPlaylist: Bool {
        if items != nil || repeatMode != nil || extensions != nil { return true }
        let lower = url.lowercased()
        return lower.hasSuffix("/") || lower.hasSuffix(".m3u") || (url.hasPrefix("/") && lower.hasSuffix(".m3u8"))
    }
}
