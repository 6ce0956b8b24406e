#if canImport(Glibc)
import Glibc
#endif

/// Files SwiftPM built next to the test binary: plugin `.so` files, fixtures, executables.
package enum BuiltProducts {
    /// The folder of the running test binary (`…/debug`).
    package static let folder: String = {
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = readlink("/proc/self/exe", &buffer, 4096)
        let exe = String(decoding: buffer[..<max(n, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // …/debug/castlinePackageTests.xctest → …/debug
        guard let slash = exe.lastIndex(of: "/") else { return "." }
        return String(exe[..<slash])
    }()

    /// `…/debug/lib<product>.so`.
    package static func library(_ product: String) -> String { "\(folder)/lib\(product).so" }
}
