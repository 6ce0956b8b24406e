import CastCore
import CastlineConfig
@testable import CastlineLocalMedia
import CastTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `media.roots`: a local path is served only when it lies in a root once symlinks are
/// resolved; the refusal never tells whether a file outside exists.
@Suite struct LocalMediaPolicyTests {
    /// `<tmp>/root/inside.mp4`, `<tmp>/outside.mp4`, `<tmp>/root/out.mp4` → ../outside.mp4, `<tmp>/root/sub/`.
    final class Tree {
        let base: String
        var root: String { base + "/root" }

        init() throws {
            var template = Array("/tmp/castline-roots-XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
            base = LocalMediaPolicy.realPath(String(cString: made!))!
            mkdir(base + "/root", 0o700)
            mkdir(base + "/root/sub", 0o700)
            for path in [base + "/root/inside.mp4", base + "/outside.mp4", base + "/root/sub/deep.mp4"] {
                close(open(path, O_CREAT | O_WRONLY, 0o600))
            }
            symlink(base + "/outside.mp4", base + "/root/out.mp4")
            symlink(base + "/root/inside.mp4", base + "/link-in.mp4")
        }

        deinit {
            for path in ["/root/out.mp4", "/link-in.mp4", "/root/inside.mp4", "/outside.mp4", "/root/sub/deep.mp4"] { unlink(base + path) }
            rmdir(base + "/root/sub")
            rmdir(base + "/root")
            rmdir(base)
        }
    }

    @Test("inside a root: resolved, with the root it lies in")
    func inside() throws {
        let tree = try Tree()
        let policy = LocalMediaPolicy(roots: [tree.root])
        #expect(try policy.resolve(tree.root + "/inside.mp4") == (tree.root + "/inside.mp4", tree.root))
        #expect(try policy.resolve(tree.root + "/sub/../sub/deep.mp4").path == tree.root + "/sub/deep.mp4")
        #expect(try policy.resolve(tree.base + "/link-in.mp4").path == tree.root + "/inside.mp4", "a link from outside into a root is its target")
    }

    @Test("outside every root, a symlink out of one, '..' out of one: 403 path_not_allowed")
    func outside() throws {
        let tree = try Tree()
        let policy = LocalMediaPolicy(roots: [tree.root])
        for path in [tree.base + "/outside.mp4", tree.root + "/out.mp4", tree.root + "/../outside.mp4", "/etc/shadow"] {
            do {
                _ = try policy.resolve(path)
                Issue.record("\(path) resolved")
            } catch {
                #expect(error.kind == .forbidden && error.code == "path_not_allowed", "\(path): \(error)")
            }
        }
    }

    @Test("a missing file outside the roots is the same 403 as an existing one; inside, it is 400")
    func noExistenceOracle() throws {
        let tree = try Tree()
        let policy = LocalMediaPolicy(roots: [tree.root])
        for (path, code) in [(tree.base + "/nope.mp4", "path_not_allowed"), ("/etc/nope", "path_not_allowed"), (tree.root + "/nope.mp4", "unreadable_file")] {
            do {
                _ = try policy.resolve(path)
                Issue.record("\(path) resolved")
            } catch {
                #expect(error.code == code, "\(path): \(error)")
            }
        }
    }

    @Test("no roots: nothing for commands; anywhere: whatever resolves")
    func noRootsAndAnywhere() throws {
        let tree = try Tree()
        do {
            _ = try LocalMediaPolicy(roots: []).resolve(tree.root + "/inside.mp4")
            Issue.record("served without roots")
        } catch {
            #expect(error.code == "path_not_allowed" && error.message.contains("media.roots") && error.message.contains("--direct"))
        }
        #expect(try LocalMediaPolicy.anywhere.resolve(tree.root + "/out.mp4") == (tree.base + "/outside.mp4", nil))
        #expect(LocalMediaPolicy(roots: [tree.base + "/missing"]).roots == [], "a root that does not exist allows nothing")
    }

    @Test("views show a served file's name, never its URL")
    func redaction() {
        let url = "http://10.0.0.5:8100/\(String(repeating: "0", count: 31))1/clip.mp4"
        let json: JSONValue = ["media": ["contentId": .string(url), "n": 3]]
        // An unknown token is left alone (not castline's URL).
        #expect(json.redactingServedURLs == json)
    }
}
