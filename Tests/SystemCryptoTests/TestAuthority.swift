#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import SystemCrypto


/// A new empty folder under /tmp, removed by ``remove(_:)``.
enum TemporaryDirectory {
    static func make() -> String {
        var template = Array("/tmp/systemcrypto-test-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(path != nil, "mkdtemp failed")
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    static func remove(_ path: String) {
        for name in ["root-ca.pem", "root-ca-key.pem", "device-ica.pem", "device-ica-key.pem", "device-model-key.pem"] {
            unlink(path + "/" + name)
        }
        rmdir(path + "/fresh")
        rmdir(path)
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }
}
