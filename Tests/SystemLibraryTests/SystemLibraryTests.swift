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

    @Test func janssonPacksAndUnpacksThroughTheShim() throws {
        let text = try #require(castline_json_pack_record("info", "CastSession", "said \"hi\"\n", 42))
        defer { castline_free(text) }
        #expect(String(cString: text) == #"{"level":"info","class":"CastSession","message":"said \"hi\"\n","line":42}"#)
        var className: UnsafeMutablePointer<CChar>?
        var line: Int64 = 0
        var error = [CChar](repeating: 0, count: 160)
        #expect(castline_json_unpack_class_line(text, &className, &line, &error, error.count) == 0)
        #expect(String(cString: className!) == "CastSession")
        #expect(line == 42)
        castline_free(className)
        #expect(castline_json_unpack_class_line("{\"class\": 3}", &className, &line, &error, error.count) == -1)
        #expect(castline_json_unpack_class_line("{\n  \"class\": ", &className, &line, &error, error.count) == -1)
        let message = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        #expect(message.hasPrefix("line 2 column"))
        // The plain (non-variadic) API imports directly.
        let number = json_integer(7)
        #expect(json_integer_value(number) == 7)
        json_decref(number)
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
