import CastNearby
import CastlineConfig

extension DoctorChecks {
    /// The nearby permission: where it lives, whether it is readable, and whether the config needs it.
    static func nearbyCheck(permission: NearbyPermission, problem: String?, directory: String, path: String, settings: NearbySettings,
                            configFile: String) -> DoctorCheck {
        let grant = "castline nearby permission grant --state-dir \(directory)"
        if let problem {
            return DoctorCheck("nearby", settings.announceJobs ? .error : .warning, problem, fix: grant + " (or `revoke`) rewrites it")
        }
        if settings.announceJobs, !permission.isGranted {
            return DoctorCheck("nearby", .error,
                               "nearby.announce_jobs is on in \(configFile) but the nearby permission is \(permission.word) (\(path)):"
                                   + " castline run announces nothing",
                               fix: grant + ", or set nearby.announce_jobs: false")
        }
        return DoctorCheck("nearby", .ok, "nearby permission \(permission.word) (\(path))"
                           + (settings.announceJobs ? "; castline run announces its jobs" : ""))
    }
}
