import CAvahi
import CCastShims
import CJansson
import COpenSSL
import CSystemd
import Glibc
import Testing

/// The system-library targets link and behave: each test makes a real call into the library.
@Suite struct SystemLibraryTests {
    @Test func avahiBuildsTXTRecordsAndNamesErrors() throws {
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for entry in ["id=0123456789abcdef0123456789abcdef", "fn=Living Room TV", "ve=05"] {
            list = avahi_string_list_add(list, entry)
        }
        defer { avahi_string_list_free(list) }
        #expect(avahi_string_list_length(list) == 3)
        let found = try #require(avahi_string_list_find(list, "fn"))
        var key: UnsafeMutablePointer<CChar>?
        var value: UnsafeMutablePointer<CChar>?
        var size = 0
        #expect(avahi_string_list_get_pair(found, &key, &value, &size) == 0)
        #expect(String(cString: key!) == "fn")
        #expect(String(cString: value!) == "Living Room TV")
        avahi_free(key)
        avahi_free(value)
        #expect(String(cString: avahi_strerror(Int32(AVAHI_ERR_NO_DAEMON))) == "Daemon not running")
    }

    @Test func sdNotifyReachesTheNotifySocket() throws {
        let path = "/tmp/castline-notify-\(getpid()).sock"
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(sd_notify(0, "READY=1\nSTATUS=castline test") > 0)
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(n > 0)
        #expect(String(decoding: buffer[0..<max(n, 0)], as: UTF8.self) == "READY=1\nSTATUS=castline test")
    }

    @Test func janssonParsesAndWritesJSON() throws {
        var error = json_error_t()
        let root = try #require(json_loads(#"{"class":"CastSession","line":42}"#, 0, &error))
        defer { json_decref(root) }
        #expect(String(cString: json_string_value(json_object_get(root, "class"))) == "CastSession")
        #expect(json_integer_value(json_object_get(root, "line")) == 42)
        let text = try #require(json_dumps(root, Int(JSON_COMPACT)))
        defer { free(text) }
        #expect(String(cString: text) == #"{"class":"CastSession","line":42}"#)
        #expect(json_loads("{\n  \"class\": ", 0, &error) == nil)
        #expect(error.line == 2)
    }

    @Test func memmemFindsTheNeedle() {
        let haystack = Array("lobby screen: dashboard".utf8)
        let needle = Array("dash".utf8)
        let found = haystack.withUnsafeBytes { h in
            needle.withUnsafeBytes { n in
                castline_memmem(h.baseAddress, h.count, n.baseAddress, n.count).map { $0 - h.baseAddress! }
            }
        }
        #expect(found == 14)
    }

    @Test func openSSLIsVersion3AndDigests() {
        #expect(OpenSSL_version_num() >= 0x3000_0000)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let input = Array("abc".utf8)
        #expect(EVP_Digest(input, input.count, &digest, &length, EVP_sha256(), nil) == 1)
        let hex = digest.prefix(Int(length)).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
