#if canImport(Glibc)
import Glibc
#endif

/// Refuses plugin files that someone else could have replaced: a file or its folder that is
/// world-writable, or owned by a user other than root and the one running castline.
package enum PluginFileSafety {
    /// nil when `path` is safe to load, else the reason (one sentence with the fix).
    package static func problem(with path: String, euid: uid_t = geteuid()) -> String? {
        guard let resolved = realpath(path, nil) else {
            return "cannot resolve the path: \(String(cString: strerror(errno)))"
        }
        let file = String(cString: resolved)
        free(resolved)
        let folder = file.lastIndex(of: "/").map { String(file[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? "."
        if let problem = check(file, what: "file", euid: euid) { return problem }
        return check(folder, what: "folder", euid: euid)
    }

    private static func check(_ path: String, what: String, euid: uid_t) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return "cannot stat the \(what) \(path): \(String(cString: strerror(errno)))" }
        if st.st_mode & S_IWOTH != 0 {
            // A sticky world-writable folder (/tmp) still lets anyone add files: refused as well.
            return "the \(what) \(path) is world-writable (mode \(String(st.st_mode & 0o7777, radix: 8))); "
                + "run `chmod o-w \(path)`"
        }
        if st.st_uid != 0, st.st_uid != euid {
            return "the \(what) \(path) is owned by uid \(st.st_uid), neither root nor the user running castline (uid \(euid)); "
                + "run `chown` to one of them"
        }
        return nil
    }
}
