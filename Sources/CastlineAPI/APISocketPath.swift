#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon's Unix socket is, when the config does not say: systemd's
/// `$RUNTIME_DIRECTORY` (the unit's `RuntimeDirectory=castline`), else `/run/castline` as root,
/// else `$XDG_RUNTIME_DIR`, else a private folder in /tmp.
package enum APISocketPath {
    package static let fileName = "castline.sock"

    /// Where `castline run` listens by default.
    package static func daemonDefault(environment env: [String: String]) -> String {
        if let runtime = env["RUNTIME_DIRECTORY"]?.split(separator: ":").first, runtime.hasPrefix("/") { return "\(runtime)/\(fileName)" }
        return candidates(environment: env).first!
    }

    /// Where a command looks for a running daemon, in order (the first socket that answers wins).
    package static func candidates(environment env: [String: String]) -> [String] {
        var paths: [String] = []
        if let runtime = env["RUNTIME_DIRECTORY"]?.split(separator: ":").first, runtime.hasPrefix("/") { paths.append("\(runtime)/\(fileName)") }
        if geteuid() == 0 { paths.append("/run/castline/\(fileName)") }
        if let xdg = env["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") { paths.append("\(xdg)/\(fileName)") }
        paths.append("/tmp/castline-\(geteuid())/\(fileName)")
        if geteuid() != 0 { paths.append("/run/castline/\(fileName)") }
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }
}
