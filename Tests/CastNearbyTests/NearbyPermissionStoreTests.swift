import CastNearby
import CastTestSupport
import Glibc
import Testing

@Suite struct NearbyPermissionStoreTests {
    @Test func absentFileIsNotDeterminedAndGrantRevokePersistAcrossStores() throws {
        let folder = ScratchFolder("nearby-permission")
        defer { folder.remove() }
        let (logs, _) = try MemoryLogSink.makeSystem()
        let dir = folder.path + "/state/castline"
        let store = NearbyPermissionStore(directory: dir, logSystem: logs)
        #expect(store.permission == .notDetermined)
        try store.grant()
        #expect(store.permission == .granted)
        #expect(NearbyPermissionStore(directory: dir, logSystem: logs).permission == .granted, "another process reads the same file")
        try store.revoke()
        #expect(NearbyPermissionStore(directory: dir, logSystem: logs).permission == .revoked)
        var info = stat()
        #expect(stat(store.path, &info) == 0 && info.st_mode & 0o777 == 0o644)
    }

    @Test func aChangeWrittenByAnotherStoreReachesTheHandler() throws {
        let folder = ScratchFolder("nearby-permission-watch")
        defer { folder.remove() }
        let (logs, _) = try MemoryLogSink.makeSystem()
        let watcher = NearbyPermissionStore(directory: folder.path, logSystem: logs)
        let recorder = NearbyTestRecorder()
        watcher.onChange { recorder.add(.status(.permission($0))) }
        try NearbyPermissionStore(directory: folder.path, logSystem: logs).grant()
        #expect(recorder.wait { $0 == [.status(.permission(.granted))] })
        try NearbyPermissionStore(directory: folder.path, logSystem: logs).revoke()
        #expect(recorder.wait { $0.last == .status(.permission(.revoked)) })
    }

    @Test func aMalformedFileCountsAsNotGrantedAndIsReported() throws {
        let folder = ScratchFolder("nearby-permission-bad")
        defer { folder.remove() }
        let (logs, sink) = try MemoryLogSink.makeSystem()
        let path = folder.path + "/" + NearbyPermissionStore.fileName
        for text in ["{\"permission\": \"granted\"", "{\"permission\": \"yes\"}", "[]", "\u{0}\u{1}garbage"] {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = text.withCString { write(fd, $0, strlen($0)) }
            close(fd)
            let store = NearbyPermissionStore(directory: folder.path, logSystem: logs)
            #expect(store.permission == .notDetermined, "\(text)")
            #expect(store.problem?.contains("counts as not granted") == true)
        }
        #expect(logs.flush())
        #expect(sink.records.contains { $0.className == "NearbyPermissionStore" && $0.level == .error })
        // Granting rewrites the bad file.
        let store = NearbyPermissionStore(directory: folder.path, logSystem: logs)
        try store.grant()
        #expect(store.permission == .granted && store.problem == nil)
    }

    @Test func theStateFolderFollowsTheEnvironment() {
        #expect(NearbyPermissionStore.defaultDirectory(environment: ["CASTLINE_STATE_DIR": "/x", "HOME": "/h"]) == "/x")
        #expect(NearbyPermissionStore.defaultDirectory(environment: ["STATE_DIRECTORY": "/var/lib/castline:/other"]) == "/var/lib/castline")
        #expect(NearbyPermissionStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/castline")
        #expect(NearbyPermissionStore.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/castline")
        #expect(NearbyPermissionStore.defaultDirectory(environment: [:]) == "/var/lib/castline")
    }

    @Test func aFolderThatCannotBeCreatedIsAClearError() throws {
        let folder = ScratchFolder("nearby-permission-ro")
        defer { folder.remove() }
        let (logs, _) = try MemoryLogSink.makeSystem()
        let file = folder.path + "/plain-file"
        close(open(file, O_WRONLY | O_CREAT, 0o644))
        let store = NearbyPermissionStore(directory: file + "/sub", logSystem: logs)
        #expect(throws: NearbyStoreError.self) { try store.grant() }
        #expect(store.permission == .notDetermined)
    }
}
