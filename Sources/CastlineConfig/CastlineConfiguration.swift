import CastCore

/// castline's configuration file (YAML), decoded and checked. Every value has a default, so an
/// empty file is a valid configuration; the schema is documented in `configs/castline.example.yaml`
/// and README.md. Decoding lives in `CastlineConfiguration+Decoding.swift`.
public struct CastlineConfiguration: Sendable {
    /// The file this came from ("<default>" for the built-in default).
    package var file: String = "<default>"
    /// The receiver app jobs and `cast` launch or join (Default Media Receiver unless set).
    package var receiverAppID = "CC1AD845"
    /// The sender id used in Cast messages (`sender-0` unless set).
    package var senderID: String?
    package var devices: [DeviceEntry] = []
    package var discovery = DiscoverySettings()
    package var logging = LoggingSettings()
    package var plugins = PluginSettings()
    package var channels = ChannelSettings()
    package var session = SessionSettings()
    package var daemon = DaemonSettings()
    package var api = APISettings()
    package var nearby = NearbySettings()
    /// The MQTT bridge; nil (no `mqtt:` section): nothing connects.
    package var mqtt: MQTTSettings?
    package var media = MediaSettings()
    package var jobs: [JobEntry] = []
    /// Where each job's device globs and media URL are in the file, by job name (kept beside
    /// the jobs so that a job compares equal wherever it sits in the file).
    package var jobMarks: [String: JobSourceMarks] = [:]

    package init() {}
}

/// A device reached by address (no mDNS needed), with the names it may be called by.
package struct DeviceEntry: Sendable, Hashable {
    package var name: String
    package var host: String
    package var port = 8009
    /// The device's uuid when known (otherwise learnt from the device).
    package var id: String?
    /// Other names `--device` and jobs may use for this device.
    package var aliases: [String] = []
    /// The device's model (`devices[].model`, e.g. "Google Nest Hub"): wins over the model its
    /// eureka_info gives; nil: the device's own. `daemon.idle_timeouts` is matched against it.
    package var model: String?
    package var mark = SourceMark(line: 0, column: 0)

    package init(name: String, host: String, port: Int = 8009, id: String? = nil, aliases: [String] = [], model: String? = nil) {
        self.name = name
        self.host = host
        self.port = port
        self.id = id
        self.aliases = aliases
        self.model = model
    }
}

package struct DiscoverySettings: Sendable {
    /// Start discovery when castline starts (`false`: only the static devices are used).
    package var autostart = true
    /// Which providers run: `static` (the `devices:` list) and discovery plugin ids
    /// (`avahi-discovery`). Nil: all of them.
    package var providers: [String]?
    /// DNS-SD service types discovery plugins may browse (the declaration check).
    package var allowedServices: [String] = ["_googlecast._tcp"]
    /// Network interfaces discovery may use (handed to the Avahi plugin); empty: all.
    package var interfaces: [String] = []
    /// How long `cast` and jobs wait for a named device to be discovered, in seconds.
    package var timeout: Double = 5

    package init() {}

    /// Whether `providers` lets a provider known by any of `names` run (a plugin provider is
    /// known by its feature id, its plugin id and `plugin/feature`; the devices list by `static`).
    /// No list: every provider runs.
    package func allows(_ names: [String]) -> Bool {
        guard let providers, !providers.isEmpty else { return true }
        return names.contains { providers.contains($0) }
    }
}

package struct LoggingSettings: Sendable {
    /// Rules in the `CASTLINE_LOG` grammar (`*:info,CastChannel.*heartbeat:none`).
    package var rules: String?
    /// Console (stderr) output on or off.
    package var console = true
    /// The console's lines: `short` (time, level, class, message; fields and location on debug
    /// records) or `detailed` (UTC time, fields and location on every record).
    package var consoleFormat = "short"
    package var sinks: [SinkEntry] = []
    /// Whether commands other than `castline run` write to ``sinks`` too (default: no; the
    /// console only). The daemon's files and journal then hold the daemon's records, and a
    /// command that is asked to write there names itself in each record (`pid`, `role: cli`).
    package var cliSinks = false

    package init() {}
}

/// A log sink provided by a plugin feature (`json`, `journald`), with its options as JSON.
package struct SinkEntry: Sendable, Hashable {
    package var type: String
    /// The options object as JSON text.
    package var options = "{}"
    package var mark = SourceMark(line: 0, column: 0)

    package init(type: String, options: String = "{}") {
        self.type = type
        self.options = options
    }
}

package struct PluginSettings: Sendable {
    /// Folders or `.so` files searched after `--plugin-path` and `CASTLINE_PLUGIN_PATH`.
    package var paths: [String] = []
    /// Plugin ids not to initialise.
    package var disabled: [String] = []
    /// Each plugin's config object as JSON text, by plugin id.
    package var configs: [String: String] = [:]
    /// Seconds a call into a plugin may take (`plugins.call_timeout`): the scan's init in its
    /// child process, and every callback.
    package var callTimeout: Double = 5
    /// Plugin ids whose `.so` runs in a helper process (`plugins.isolated`) even when it ships
    /// with castline: a crash there is logged and the plugin restarted, castline goes on.
    package var isolated: [String] = []
    /// Plugin ids that do not ship with castline but run in its process all the same
    /// (`plugins.in_process`); every other such plugin runs isolated.
    package var inProcess: [String] = []
    /// What each isolated plugin's helper process may use (`plugins.limits`).
    package var limits = PluginLimits()
    package var marks: [String: SourceMark] = [:]

    package init() {}
}

/// `plugins.limits`: the bounds on each isolated plugin's helper process. Going over one is
/// logged with the limit's name, and the helper is restarted.
package struct PluginLimits: Sendable, Equatable {
    /// Resident memory, in MiB.
    package var memoryMB = 256
    /// CPU seconds the helper may use in any one minute (60: a whole core).
    package var cpuSeconds = 30.0
    /// Open file descriptors (RLIMIT_NOFILE).
    package var openFiles = 256
    package init() {}
}

package struct ChannelSettings: Sendable {
    /// Custom namespaces channel plugins may use (`channels.allowed_namespaces`).
    package var allowedNamespaces: [String] = []

    /// DashCast's, Home Assistant Cast's and castline's receiver's namespaces (the first-party web-pages plugin's
    /// channels): always allowed, besides the config's.
    package static let webPageNamespaces = ["urn:x-cast:com.madmod.dashcast", "urn:x-cast:com.nabucasa.hast", CastlineReceiver.namespace]

    /// The namespaces in force: the config's and the web-page apps'.
    package var permitted: Set<String> { Set(allowedNamespaces).union(Self.webPageNamespaces) }

    package init() {}
}

package struct SessionSettings: Sendable {
    package enum DeviceAuth: String, Sendable, CaseIterable { case off, warn, require }

    /// Where sessions are saved so a restarted castline resumes them.
    package var resumeFile: String?
    package var heartbeatInterval: Double = 5
    package var heartbeatTimeout: Double = 10
    package var connectTimeout: Double = 5
    package var requestTimeout: Double = 10
    /// Reconnect attempts after a drop; nil: unlimited.
    package var reconnectMaxAttempts: Int?
    package var reconnectInitialDelay: Double = 0.05
    package var reconnectMaxDelay: Double = 10
    package var deviceAuth = DeviceAuth.off
    /// PEM files with extra trust anchors for device authentication.
    package var trustAnchors: [String] = []

    package init() {}
}

package struct DaemonSettings: Sendable {
    package enum OnStop: String, Sendable, CaseIterable { case leave, stop }

    /// On SIGTERM: `leave` the receiver apps running, or `stop` castline's own casts (never
    /// another sender's).
    package var onStop = OnStop.leave
    /// A job removed at run time (API, SIGHUP): `stop` its cast, or `leave` it playing.
    package var onJobRemoved = OnStop.stop
    /// Where jobs added through the API are kept (nil: `jobs.json` in the state folder).
    package var jobsFile: String?
    /// Device models (globs over the model name) with the idle timeout their receivers apply to
    /// apps without media, in seconds (`daemon.idle_timeouts`); the first match wins. Site jobs
    /// without their own `idle_timeout` keep their page up by it.
    package var idleTimeouts: [(model: String, seconds: Double)] = []
    /// Device models (globs over the model name) with what castline assumes of their field
    /// behaviour (`daemon.field_profiles`): a built-in profile, and overrides on top. The first
    /// match wins; without one, the model name picks the profile (``FieldProfile/forModel(_:isVideoDevice:)``).
    package var fieldProfiles: [FieldProfileOverride] = []
    /// Divides every duration castline takes from a field profile (`daemon.field_time_scale`):
    /// for a test against a simulator run with `--field-time-scale`, never for real devices.
    package var fieldTimeScale: Double = 1
    /// The app id the operator registered castline's receiver page under (`daemon.castline_receiver_app_id`):
    /// page jobs with `receiver: castline` launch it.
    package var castlineReceiverAppID: String?

    package init() {}
}

/// One `daemon.field_profiles` entry: `"MODEL GLOB": PROFILE`, or a mapping with `profile`,
/// `idle_timeout` (seconds, or `never`) and `idle_reset_by` (`media` or `any-message`).
package struct FieldProfileOverride: Sendable, Hashable {
    package var model: String
    /// A built-in profile's name (nil: the model's own).
    package var profile: String?
    /// Set: the idle timeout of apps without media (`.some(nil)`: the device never closes them).
    package var idleTimeout: Double??
    package var idleResetBy: FieldProfile.IdleReset?

    package init(model: String, profile: String? = nil, idleTimeout: Double?? = nil, idleResetBy: FieldProfile.IdleReset? = nil) {
        self.model = model
        self.profile = profile
        self.idleTimeout = idleTimeout
        self.idleResetBy = idleResetBy
    }
}

/// The control API of `castline run` (docs/api.md).
package struct APISettings: Sendable {
    /// The Unix socket (nil: `$RUNTIME_DIRECTORY/castline.sock`, else `/run/castline/castline.sock`
    /// as root or `$XDG_RUNTIME_DIR/castline.sock`).
    package var socket: String?
    /// An optional TCP listener, `host:port` (bearer token required).
    package var listen: String?
    /// The bearer token for TCP clients; the file must not be readable by others (mode 0600).
    package var tokenFile: String?
    /// TLS for the TCP listener: PEM certificate chain and private key.
    package var tlsCertificate: String?
    package var tlsKey: String?
    /// Seconds a connection may stay silent mid-request or between requests before it is closed.
    package var readTimeout: Double = 30
    package var mark = SourceMark(line: 0, column: 0)

    package init() {}
}

/// Nearby messages (`castline nearby`, and job announcements by `castline run`).
package struct NearbySettings: Sendable {
    /// The folder holding the nearby permission (nil: $CASTLINE_STATE_DIR, $STATE_DIRECTORY,
    /// $XDG_STATE_HOME/castline, ~/.local/state/castline).
    package var stateDir: String?
    /// Only these interfaces count (availability, results); empty: every multicast interface.
    package var interfaces: [String] = []
    /// `castline run` publishes each job's state per device (type `castline.job`).
    package var announceJobs = false
    /// The namespace of the job announcements.
    package var namespace = "castline"
    package var mark = SourceMark(line: 0, column: 0)

    package init() {}
}

/// Declarative casting: keep `media` playing on every device matching `devices`.
package struct JobEntry: Sendable, Hashable {
    package enum ScreenOffPolicy: String, Sendable, CaseIterable { case report, wake }
    package enum Trigger: String, Sendable, CaseIterable { case idle, reboot, found }
    package enum Takeover: String, Sendable, CaseIterable {
        /// Leave the device to the other sender; cast again when it goes idle (or after `reclaim_after`).
        case yield
        /// Cast again at once.
        case reclaim
    }

    package var name: String
    /// Globs over device names, aliases and ids (`Lobby*`).
    package var devices: [String]
    /// The receiver app (default: the top-level `receiver_app_id`).
    package var appID: String?
    /// What the job casts. For a site job, the site's URL as `text/html` (what the job shows).
    package var media: MediaEntry
    /// A web page kept on the devices through DashCast, instead of media.
    package var site: SiteEntry?
    /// Dayparting: the entries' times (in `timezone`), each with what it shows
    /// (``scheduled``, in the same order), and what shows outside them (nil: nothing, the device
    /// is left idle). Without a schedule, `media`/`site` always show.
    package var schedule: Schedule?
    package var scheduled: [Content] = []
    package var fallback: Content?
    /// An announce job: plays this announcement (when run, or at its times) on the devices and
    /// restores each, instead of keeping media playing. `media` then names the announcement.
    package var announcement: AnnouncementEntry?

    /// What a schedule entry (or the fallback) shows: media or a site.
    package struct Content: Sendable, Hashable {
        package var media: MediaEntry?
        package var site: SiteEntry?
        package init(media: MediaEntry? = nil, site: SiteEntry? = nil) {
            self.media = media
            self.site = site
        }
    }

    /// This job showing `content` instead of its own media or site.
    package func showing(_ content: Content) -> JobEntry {
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
    package var recastOn: Set<Trigger> = Set(Trigger.allCases)
    package var takeover = Takeover.yield
    /// What to do when the device's screen does not show the job's app (covered, in standby, on
    /// another input): `report` it only, or `wake` it by launching the app again (a LAUNCH lifts
    /// ambient mode and, over HDMI-CEC, turns the TV on and takes its input).
    package var screenOff = ScreenOffPolicy.report
    /// With `takeover: yield`, reclaim the device after this many seconds even if it stays busy.
    package var reclaimAfter: Double?
    /// Seconds between checks that the media still plays (a status request).
    package var checkInterval: Double = 30
    /// Seconds to wait before casting again after a failure (doubles up to 16×).
    package var retryDelay: Double = 2
    /// A video wall: the devices play `media` in step, started at one instant and kept together
    /// (docs/sync.md), instead of each on its own.
    package var sync = false
    package var mark = SourceMark(line: 0, column: 0)

    package init(name: String, devices: [String], media: MediaEntry) {
        self.name = name
        self.devices = devices
        self.media = media
    }
}

/// A web page a job keeps on its devices (`site:`): shown with DashCast, re-sent before the
/// device's idle timeout stops the app, and shown again as soon as the app stops.
package struct SiteEntry: Sendable, Hashable {
    /// Seconds a receiver lets an app that plays no media run: about 10 minutes on the Nest Hubs
    /// and Chromecasts users report (DashCast #12, HA frontend #5729); some stop it after 30 s,
    /// which `idle_timeout` then says.
    package static let defaultIdleTimeout = 600.0

    package var url: String
    /// nil: the pre-flight decides (a page that refuses frames, or an http page, is forced).
    package var force: Bool?
    /// Seconds between DashCast's reloads of the page (0: never).
    package var reloadEvery: Double = 0
    /// The device's idle timeout for apps without media (nil: by the device's model from
    /// `daemon.idle_timeouts`, else ``defaultIdleTimeout``).
    package var idleTimeout: Double?
    /// Check the page before each cast (reachable; framing).
    package var preflight = true
    /// The receiver app that shows the page: DashCast, or castline's own receiver page (hosted
    /// by the operator, under `daemon.castline_receiver_app_id`), which keeps itself alive.
    package var receiver = Receiver.dashcast
    package var receiverMark: SourceMark?

    package enum Receiver: String, Sendable, CaseIterable { case dashcast, castline }

    package init(url: String) { self.url = url }

    /// Seconds between keep-alives for an idle timeout: a minute before it, or two thirds of a short one.
    package static func keepAliveInterval(idleTimeout: Double) -> Double { idleTimeout > 90 ? idleTimeout - 60 : idleTimeout * 2 / 3 }
}

/// What to cast: a URL with optional metadata (filled from the media-formats plugin when omitted).
package struct MediaEntry: Sendable, Hashable {
    package enum StreamType: String, Sendable, CaseIterable { case buffered, live, none }

    package var url: String
    package var contentType: String?
    package var streamType: StreamType?
    package var title: String?
    package var subtitle: String?
    package var studio: String?
    package var image: String?
    package var autoplay = true
    /// A playlist: the items in order (`media: [a, b, c]`, or `items:`); nil with a folder or an
    /// M3U file as `url`, which the hub expands when it casts.
    package var items: [String]?
    /// A folder's files: only these extensions (lowercase, no dot).
    package var extensions: [String]?
    /// A playlist's repeat mode: `off`, `all` (the default for a playlist), `single`, `shuffle`.
    package var repeatMode: RepeatChoice?

    package enum RepeatChoice: String, Sendable, CaseIterable { case off, all, single, shuffle }

    package init(url: String) { self.url = url }

    /// What a site job shows, as media: the page's URL as `text/html`.
    package init(page site: SiteEntry) {
        url = site.url
        contentType = "text/html"
    }

    /// Several items, a folder, or an M3U file: a queue, not one media.
    package var isPlaylist: Bool {
        if items != nil || repeatMode != nil || extensions != nil { return true }
        let lower = url.lowercased()
        return lower.hasSuffix("/") || lower.hasSuffix(".m3u") || (url.hasPrefix("/") && lower.hasSuffix(".m3u8"))
    }
}
