import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// What to tell the user when a socket call failed because the process (EMFILE) or the system
/// (ENFILE) is out of file descriptors: the fix is a higher limit, not a retry. Shared by the
/// listeners (failed accepts) and the sender's connections (failed `socket()`).
package enum DescriptorShortage {
    /// The hint for `code`, or nil when it is not a descriptor shortage.
    package static func hint(errno code: CInt) -> String? {
        switch code {
        case EMFILE: return "this process is out of file descriptors: raise LimitNOFILE= in its systemd unit or ulimit -n"
        case ENFILE: return "the system is out of file descriptors: raise fs.file-max or close descriptors elsewhere"
        default: return nil
        }
    }

    /// The hint for an `IOError` with such an errno; nil for any other error.
    package static func hint(for error: any Error) -> String? {
        (error as? IOError).flatMap { hint(errno: $0.errnoCode) }
    }
}
