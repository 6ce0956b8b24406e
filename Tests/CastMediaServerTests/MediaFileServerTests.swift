import CastMediaServer
import CastTestSupport
import Glibc
import Testing

/// ``MediaFileServer`` on real loopback sockets, spoken to by a raw-socket client: whole files,
/// ranges, HEAD, CORS, errors, keep-alive and the request history.
@Suite("MediaFileServer over loopback")
struct MediaFileServerTests {
    @Test("the URL is http://host:port/<16 hex>/<name>")
    func urlShape() async throws {
        try await withMediaServerRig { rig in
            let url = rig.server.url(for: "movie.mp4")
            #expect(url == "http://127.0.0.1:\(rig.server.port)/\(rig.server.token)/movie.mp4")
            #expect(rig.server.token.count == 16)
            #expect(rig.server.token.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(rig.server.port > 0)
            #expect(rig.server.url(for: "a b/ü%.mp4").hasSuffix("/a%20b%2F%C3%BC%25.mp4"))
            try await withMediaServerRig { other in
                #expect(other.server.token != rig.server.token, "each server draws its own token")
            }
        }
    }

    @Test("GET → 200 with the whole file, Accept-Ranges, Content-Type and CORS")
    func fullGet() async throws {
        try await withMediaServerRig { rig in
            let response = try rig.request("GET")
            #expect(response.status == 200)
            #expect(response.body == rig.contents)
            #expect(response.header("Content-Length") == "300000")
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.header("Content-Type") == "video/mp4")
            #expect(response.header("Access-Control-Allow-Origin") == "*")
            #expect(response.header("Content-Range") == nil)
        }
    }

    @Test("Range: bytes=1000-1999 → 206 with exactly those bytes")
    func closedRange() async throws {
        try await withMediaServerRig { rig in
            let response = try rig.request("GET", headers: ["Range: bytes=1000-1999"])
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes 1000-1999/300000")
            #expect(response.header("Content-Length") == "1000")
            #expect(response.body == Array(rig.contents[1000...1999]))
        }
    }

    @Test("suffix and open-ended ranges; an end past the file is clamped")
    func suffixAndOpenRanges() async throws {
        try await withMediaServerRig { rig in
            let suffix = try rig.request("GET", headers: ["Range: bytes=-500"])
            #expect(suffix.status == 206)
            #expect(suffix.header("Content-Range") == "bytes 299500-299999/300000")
            #expect(suffix.body == Array(rig.contents[299_500...]))
            let open = try rig.request("GET", headers: ["Range: bytes=299990-"])
            #expect(open.header("Content-Range") == "bytes 299990-299999/300000")
            #expect(open.body == Array(rig.contents[299_990...]))
            let clamped = try rig.request("GET", headers: ["Range: bytes=299000-999999"])
            #expect(clamped.header("Content-Range") == "bytes 299000-299999/300000")
            #expect(clamped.body.count == 1000)
        }
    }

    @Test("an unsatisfiable range → 416 with bytes */size; a malformed or multi range → 200")
    func unsatisfiableAndIgnoredRanges() async throws {
        try await withMediaServerRig { rig in
            let beyond = try rig.request("GET", headers: ["Range: bytes=300000-"])
            #expect(beyond.status == 416)
            #expect(beyond.header("Content-Range") == "bytes */300000")
            #expect(beyond.body.isEmpty)
            #expect(beyond.header("Access-Control-Allow-Origin") == "*")
            for header in ["Range: bytes=5-1", "Range: bytes=0-1,5-6", "Range: items=0-5"] {
                let ignored = try rig.request("GET", headers: [header])
                #expect(ignored.status == 200, "\(header)")
                #expect(ignored.body.count == 300_000, "\(header)")
            }
            let ifRange = try rig.request("GET", headers: ["Range: bytes=0-9", "If-Range: \"abc\""])
            #expect(ifRange.status == 200, "an If-Range we cannot validate means the whole file")
        }
    }

    @Test("HEAD → the GET headers, no body (the connection stays usable)")
    func head() async throws {
        try await withMediaServerRig { rig in
            let client = try rig.client()
            defer { client.close() }
            let head = try client.request("HEAD", rig.target, expectBody: false)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "300000")
            #expect(head.header("Accept-Ranges") == "bytes")
            #expect(head.header("Content-Type") == "video/mp4")
            let rangedHead = try client.request("HEAD", rig.target, headers: ["Range: bytes=10-19"], expectBody: false)
            #expect(rangedHead.status == 206)
            #expect(rangedHead.header("Content-Length") == "10")
            // Had HEAD sent body bytes, this GET would read them as its status line.
            let get = try client.request("GET", rig.target, headers: ["Range: bytes=0-3"])
            #expect(get.status == 206)
            #expect(get.body == Array(rig.contents[0...3]))
        }
    }

    @Test("a wrong token or an unknown name → 404, whatever the method")
    func notFound() async throws {
        try await withMediaServerRig { rig throws in
            let name = rig.target.split(separator: "/").last.map(String.init) ?? ""
            for target in ["/0000000000000000/\(name)", "/\(rig.server.token)/other.mp4", "/\(name)", "/",
                           "/\(rig.server.token)", "/\(rig.server.token)/", "/\(rig.server.token)/\(name)/x",
                           "/\(rig.server.token)/%zz"] {
                #expect(try rig.request("GET", target).status == 404, "\(target)")
            }
            #expect(try rig.request("POST", "/0000000000000000/\(name)").status == 404)
            #expect(try rig.request("GET", rig.target + "?t=1").status == 200, "a query is ignored")
        }
    }

    @Test("POST → 405 with Allow; OPTIONS → 204 CORS preflight")
    func methods() async throws {
        try await withMediaServerRig { rig in
            let post = try rig.request("POST")
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET, HEAD, OPTIONS")
            let options = try rig.request("OPTIONS", headers: [
                "Origin: https://receiver.example", "Access-Control-Request-Method: GET",
                "Access-Control-Request-Headers: range",
            ])
            #expect(options.status == 204)
            #expect(options.header("Access-Control-Allow-Origin") == "*")
            #expect(options.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
            #expect(options.header("Access-Control-Allow-Headers") == "Range, Content-Type")
            #expect(options.header("Content-Length") == nil)
            #expect(options.body.isEmpty)
        }
    }

    @Test("keep-alive: two requests on one connection, also pipelined")
    func keepAlive() async throws {
        try await withMediaServerRig { rig in
            let client = try rig.client()
            defer { client.close() }
            let first = try client.request("GET", rig.target, headers: ["Range: bytes=0-99"])
            let second = try client.request("GET", rig.target, headers: ["Range: bytes=100-199"])
            #expect(first.status == 206 && second.status == 206)
            #expect(first.body + second.body == Array(rig.contents[0...199]))
            try client.send(RawHTTPClient.requestText("GET", rig.target, headers: ["Range: bytes=5-9"])
                            + RawHTTPClient.requestText("GET", rig.target, headers: ["Range: bytes=10-14", "Connection: close"]))
            let third = try client.readResponse()
            let fourth = try client.readResponse()
            #expect(third.body == Array(rig.contents[5...9]))
            #expect(fourth.body == Array(rig.contents[10...14]))
            #expect(try client.readsEOF(), "Connection: close is honoured")
        }
    }

    @Test("requests are recorded with method, path, range, status and bytes")
    func history() async throws {
        try await withMediaServerRig { rig in
            _ = try rig.request("GET", headers: ["Range: bytes=1000-1999"])
            _ = try rig.request("HEAD", expectBody: false)
            _ = try rig.request("GET", "/nope")
            let requests = await rig.requests(atLeast: 3)
            try #require(requests.count == 3)
            #expect(requests[0].method == "GET" && requests[0].path == rig.target && requests[0].range == "bytes=1000-1999")
            #expect(requests[0].status == 206 && requests[0].bytes == 1000 && requests[0].completed)
            #expect(requests[0].peer.hasPrefix("127.0.0.1:"))
            #expect(requests[1].method == "HEAD" && requests[1].status == 200 && requests[1].bytes == 0)
            #expect(requests[2].status == 404 && requests[2].range == nil)
            for _ in 0..<(MediaFileServer.requestHistoryLimit + 5) { _ = try rig.request("GET", "/x") }
            #expect(await rig.requests(atLeast: MediaFileServer.requestHistoryLimit).count == MediaFileServer.requestHistoryLimit)
        }
    }

    @Test("an empty file: 200 with no body; any range is 416")
    func emptyFile() async throws {
        try await withMediaServerRig(size: 0, name: "empty.bin", contentType: "application/octet-stream") { rig in
            let whole = try rig.request("GET")
            #expect(whole.status == 200 && whole.body.isEmpty && whole.header("Content-Length") == "0")
            #expect(whole.header("Content-Type") == "application/octet-stream")
            let ranged = try rig.request("GET", headers: ["Range: bytes=0-"])
            #expect(ranged.status == 416 && ranged.header("Content-Range") == "bytes */0")
        }
    }

    @Test("a file removed after start → 404; the server keeps serving")
    func removedFile() async throws {
        try await withMediaServerRig(size: 10) { rig in
            unlink("\(rig.directory)/\(rig.name)")
            #expect(try rig.request("GET").status == 404)
            try MediaServerRig.write([1, 2, 3], to: "\(rig.directory)/\(rig.name)")
            let back = try rig.request("GET")
            #expect(back.status == 200 && back.body == [1, 2, 3], "the file is opened per request")
        }
    }

    @Test("stop closes the listener and open connections")
    func stopCloses() async throws {
        try await withMediaServerRig { rig in
            let idle = try rig.client()
            defer { idle.close() }
            _ = try idle.request("GET", rig.target, headers: ["Range: bytes=0-0"])
            let port = rig.server.port
            let served = rig.server.requests.count
            try await rig.stop()
            #expect(try idle.readsEOF())
            // The listener is gone: a connection is refused, unless a test running in parallel has
            // bound the freed port since; then whoever answers is not this server (it serves nothing more).
            if let other = try? RawHTTPClient(host: "127.0.0.1", port: port) {
                defer { other.close() }
                _ = try? other.request("GET", rig.target, headers: ["Range: bytes=0-0", "Connection: close"])
                #expect(rig.server.requests.count == served, "the stopped server served a request")
            }
        }
    }

    @Test("IPv6 loopback: bracketed URL, served over [::1]",
          .enabled(if: TestEnvironment.hasIPv6Loopback, "needs IPv6 on the loopback interface (no socket binds [::1])"))
    func ipv6() async throws {
        try await withMediaServerRig(size: 1000, host: "::1") { rig in
            #expect(rig.server.url(for: rig.name).hasPrefix("http://[::1]:\(rig.server.port)/"))
            let response = try rig.request("GET", headers: ["Range: bytes=0-9"])
            #expect(response.status == 206 && response.body == Array(rig.contents[0...9]))
        }
    }

    @Test("FacingAddress: loopback devices are reached from loopback; bad hosts throw")
    func facingAddress() throws {
        #expect(try FacingAddress.localAddress(facing: "127.0.0.1", port: 8009) == "127.0.0.1")
        #expect(try FacingAddress.localAddress(facing: "127.0.0.53", port: 8009) == "127.0.0.1")
        #expect(throws: FacingAddress.Failure.self) { try FacingAddress.localAddress(facing: "no-such-host.invalid", port: 8009) }
    }

    @Test("FacingAddress: an IPv6 loopback device is reached from ::1",
          .enabled(if: TestEnvironment.hasIPv6Loopback, "needs IPv6 on the loopback interface (no socket binds [::1])"))
    func facingAddressIPv6() throws {
        #expect(try FacingAddress.localAddress(facing: "::1", port: 8009) == "::1")
    }
}
