/// What the host loads and allows: the search path, the declarations the config allows, and each
/// plugin's own configuration.
public struct PluginHostConfiguration: Sendable {
    /// The config key that lists DNS-SD service types discovery plugins may browse.
    package static let allowedServicesKey = "discovery.allowed_services"
    /// The config key that lists namespaces channel plugins may use.
    package static let allowedNamespacesKey = "channels.allowed_namespaces"
    /// Allowed without configuration: the Cast service every discovery plugin needs.
    public static let defaultAllowedServices: Set<String> = ["_googlecast._tcp"]

    package var searchPath: PluginSearchPath
    /// DNS-SD service types (`_googlecast._tcp`); a subtype browse (`_X._sub._googlecast._tcp`)
    /// counts as its parent type.
    package var allowedServiceTypes: Set<String>
    /// Custom namespaces (`urn:x-cast:com.example.echo`).
    package var allowedNamespaces: Set<String>
    /// Each plugin's config object as JSON text, by plugin id ("{}" when absent).
    package var pluginConfigs: [String: String]
    /// Plugin ids not to initialise (`plugins.<id>.enabled: false`).
    package var disabledPlugins: Set<String>
    /// Off only for tests that load from a world-writable scratch folder on purpose.
    package var checkFileSafety: Bool
    /// The kinds of features this process uses (a `discover` run needs no channels): features of
    /// other kinds are skipped without a refusal, and a plugin with none of these kinds is not
    /// initialised.
    public var featureKinds: Set<PluginFeatureKind>
    /// Describes and initialises each file in a child process before loading it here (nil: load
    /// directly, as tests of the loader itself do). `castline` scans with itself.
    public var scanner: PluginScanner?
    /// Seconds a callback into a feature instance may take (`plugins.call_timeout`): a channel's
    /// open, on_message, command and close, a log sink's open, write, flush and close. An instance
    /// that overruns is named in an error record, its plugin disabled and the instance closed.
    package var callTimeout: Double
    /// Plugin ids whose `.so` runs in a helper process (`plugins.isolated`): ``IsolatedPlugin``.
    /// Needs the ``scanner``'s executable (castline), which is also the helper.
    public var isolatedPlugins: Set<String> = []
    /// Plugin ids that run in this process though they do not ship with castline
    /// (`plugins.in_process`). With a ``scanner``, every other plugin that is not castline's own
    /// (``PluginSearchPath/isFirstParty(_:)``) runs isolated.
    package var inProcessPlugins: Set<String> = []
    /// The bounds on each isolated plugin's helper (`plugins.limits`).
    package var limits = IsolationLimits()

    public init(searchPath: PluginSearchPath = PluginSearchPath(),
                allowedServiceTypes: Set<String> = PluginHostConfiguration.defaultAllowedServices,
                allowedNamespaces: Set<String> = [], pluginConfigs: [String: String] = [:],
                disabledPlugins: Set<String> = [], checkFileSafety: Bool = true,
                featureKinds: Set<PluginFeatureKind> = Set(PluginFeatureKind.allCases), scanner: PluginScanner? = nil,
                callTimeout: Double = 5) {
        self.searchPath = searchPath
        self.allowedServiceTypes = allowedServiceTypes
        self.allowedNamespaces = allowedNamespaces
        self.pluginConfigs = pluginConfigs
        self.disabledPlugins = disabledPlugins
        self.checkFileSafety = checkFileSafety
        self.featureKinds = featureKinds
        self.scanner = scanner
        self.callTimeout = callTimeout
    }

    /// The parent service of a subtype browse: `_CC1AD845._sub._googlecast._tcp` → `_googlecast._tcp`.
    static func baseServiceType(_ type: String) -> String {
        let parts = type.split(separator: ".", omittingEmptySubsequences: false)
        if let sub = parts.firstIndex(of: "_sub"), sub > 0, sub + 1 < parts.count {
            return parts[(sub + 1)...].joined(separator: ".")
        }
        return type
    }
}

/// What an isolated plugin's helper process may use; over a bound, it is killed, logged with the
/// limit's name, and restarted.
package struct IsolationLimits: Sendable, Equatable {
    /// Resident memory in MiB (`memory_mb`).
    package var memoryMB: Int
    /// CPU seconds in any one minute (`cpu_seconds`).
    package var cpuSeconds: Double
    /// Open descriptors (`open_files`, RLIMIT_NOFILE in the helper).
    package var openFiles: Int

    package init(memoryMB: Int = 256, cpuSeconds: Double = 30, openFiles: Int = 256) {
        self.memoryMB = memoryMB
        self.cpuSeconds = cpuSeconds
        self.openFiles = openFiles
    }
}
