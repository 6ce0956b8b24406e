import ArgumentParser

/// castline's exit codes, the same for every command (documented in `castline --help` and README).
enum CastlineExit {
    /// 1: a runtime failure (connection refused or lost, a daemon missing, a socket not bound).
    static let failure = ExitCode(1)
    /// 2: the configuration file is wrong (each error printed as file:line:column).
    static let configError = ExitCode(2)
    /// 3: no device matched `--device` within the discovery timeout.
    static let noDevice = ExitCode(3)
    /// 4: the device refused: LOAD failed, no media app runs, the command is not supported; or
    /// the nearby permission is not granted.
    static let refused = ExitCode(4)
    /// 5: an announcement played, but what was playing could not all be brought back.
    static let notRestored = ExitCode(5)
    /// 64: a usage error (EX_USAGE): a wrong option or argument.
    static let usage = ExitCode(64)

    static let summary = """
        Exit codes: 0 success; 1 runtime failure (connection, daemon, socket); 2 configuration \
        file error (file:line:column); 3 no device matched --device; 4 the device refused (LOAD \
        failed, no media app running) or the nearby permission is not granted; 5 an announcement \
        could not bring back all that was playing; 64 usage error.
        """
}
