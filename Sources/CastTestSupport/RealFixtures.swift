import CastCore

/// The real devices' payloads in `Tests/Fixtures/real/` (transcribed from public issue threads;
/// its README says how), for the tests that hold castline and the simulator to them.
package enum RealFixtures {
    /// `…/Tests/Fixtures/real`, found from this source file's place in the repository.
    package static let folder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/Tests/Fixtures/real"
    }()

    package struct Unreadable: Error, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "\(path): \(reason)" }

        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// The fixture `name` parsed; every fixture names its `source`.
    package static func json(_ name: String) throws -> JSONValue {
        let path = folder + "/" + name
        let bytes: [UInt8]?
        do { bytes = try SmallFile.read(path: path, limit: 1 << 20) } catch { throw Unreadable(path: path, reason: "\(error)") }
        guard let bytes else { throw Unreadable(path: path, reason: "no such file") }
        let json = try JSONValue.parse(String(decoding: bytes, as: UTF8.self))
        guard json["source"]?.string != nil else { throw Unreadable(path: path, reason: "no \"source\"") }
        return json
    }
}
