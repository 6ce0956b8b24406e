import CastCore
import CastTestSupport
import Glibc
import Testing

@Suite("SmallFile: capped reads and atomic replacement")
struct SmallFileTests {
    func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    func entries(_ folder: String) -> [String] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    @Test func readsWholeFilesUpToTheLimitAndAbsentIsNil() throws {
        let folder = ScratchFolder("smallfile-read")
        defer { folder.remove() }
        let path = folder.path + "/state.json"
        #expect(try SmallFile.read(path: path, limit: 10) == nil)
        let contents = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }  // more than one 16 KiB chunk
        try SmallFile.replace(path: path, contents: contents, mode: 0o644)
        #expect(try SmallFile.read(path: path, limit: 40_000) == contents)
        #expect(throws: SmallFile.Failure(path: path, step: .tooLarge, code: 0)) { try SmallFile.read(path: path, limit: 39_999) }
        // A folder opens but cannot be read.
        do {
            _ = try SmallFile.read(path: folder.path, limit: 10)
            Issue.record("reading a folder succeeded")
        } catch {
            #expect(error.step == .read && error.code == EISDIR && error.path == folder.path)
            #expect(error.description == "cannot read \(folder.path): Is a directory")
        }
    }

    @Test func replacesAtomicallyWithTheExactModeAndLeavesNoTemporaryFile() throws {
        let folder = ScratchFolder("smallfile-replace")
        defer { folder.remove() }
        let path = folder.path + "/key.pem"
        let previous = umask(0)
        defer { umask(previous) }
        try SmallFile.replace(path: path, contents: Array("first".utf8), mode: 0o666)
        #expect(mode(path) == 0o666, "fchmod sets the mode whatever the umask")
        umask(0o077)
        try SmallFile.replace(path: path, contents: Array("second, longer".utf8), mode: 0o644)
        #expect(mode(path) == 0o644)
        #expect(try SmallFile.read(path: path, limit: 100) == Array("second, longer".utf8))
        try SmallFile.replace(path: path, contents: [], mode: 0o600)
        #expect(try SmallFile.read(path: path, limit: 100) == [])
        #expect(mode(path) == 0o600)
        #expect(entries(folder.path) == ["key.pem"])
    }

    @Test func aSymlinkAtTheTemporaryPathIsNotFollowedAndFailuresNameTheStep() throws {
        let folder = ScratchFolder("smallfile-symlink")
        defer { folder.remove() }
        let path = folder.path + "/permission.json"
        let victim = folder.path + "/victim"
        try SmallFile.replace(path: victim, contents: Array("keep me".utf8), mode: 0o644)
        let temporary = path + ".tmp.\(getpid())"
        #expect(symlink(victim, temporary) == 0)
        #expect(throws: SmallFile.Failure(path: temporary, step: .create, code: ELOOP)) {
            try SmallFile.replace(path: path, contents: Array("x".utf8), mode: 0o644)
        }
        #expect(try SmallFile.read(path: victim, limit: 100) == Array("keep me".utf8))
        unlink(temporary)
        // A missing folder: the temporary file cannot be created, and the message says so.
        let missing = folder.path + "/no/such/file"
        do {
            try SmallFile.replace(path: missing, contents: [1], mode: 0o644)
            Issue.record("replace into a missing folder succeeded")
        } catch {
            #expect(error.step == .create && error.code == ENOENT)
            #expect(error.description == "cannot create \(missing).tmp.\(getpid()): No such file or directory")
        }
        // The target is a folder: the rename fails, and the temporary file is removed.
        let occupied = folder.path + "/occupied"
        #expect(mkdir(occupied, 0o755) == 0)
        #expect(throws: SmallFile.Failure(path: occupied, step: .rename, code: EISDIR)) {
            try SmallFile.replace(path: occupied, contents: [1], mode: 0o644)
        }
        #expect(entries(folder.path) == ["occupied", "victim"])
    }
}
