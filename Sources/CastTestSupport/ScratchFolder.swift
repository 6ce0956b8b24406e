#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder under /tmp (mode 0755), removed by `remove()`.
package struct ScratchFolder: Sendable {
    package let path: String

    package init(_ name: String) {
        var template = Array("/tmp/castline-\(name)-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        chmod(path, 0o755)
    }

    /// Copies a file into the folder; returns the new path.
    @discardableResult
    package func copy(_ source: String, as name: String? = nil, mode: mode_t = 0o755) -> String {
        let target = path + "/" + (name ?? String(source[source.index(after: source.lastIndex(of: "/")!)...]))
        let input = fopen(source, "rb")!
        let output = fopen(target, "wb")!
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = fread(&buffer, 1, buffer.count, input)
            if n == 0 { break }
            fwrite(buffer, 1, n, output)
        }
        fclose(input)
        fclose(output)
        chmod(target, mode)
        return target
    }

    /// Removes the folder and everything in it, depth first, without following symbolic links
    /// (a test's symlink to a system path removes the link, not its target).
    package func remove() {
        Self.removeTree(path)
    }

    private static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR, let dir = opendir(path) {
            var names: [String] = []
            while let item = readdir(dir) {
                let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
                if name != ".", name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
