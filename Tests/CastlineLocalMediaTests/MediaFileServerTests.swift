import CastlineLocalMedia
import CastTestSupport
import Glibc
import Testing

/// ``MediaFileServer`` on real loopback sockets, spoken to by a raw-socket client: whole files,
/// ranges, HEAD, CORS, errors, keep-alive and the request history.
@Suite("MediaFileServer over loopback")
struct MediaFileServerTests {
    @Test("the URL is http://host:port/<32 hex>/<name>, a token per published file")
    func urlShape() async throws {
        try await withMediaServerRig { rig in
            let url = rig.publication.url(for: "movie.mp4")
            #expect(url == "http://127.0.0.1:\(rig.server.port)/\(rig.token)/movie.mp4")
            #expect(rig.token.count == 32)
            #expect(rig.token.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(rig.server.port > 0)
            let odd = try rig.server.publish(["a b/ü%.mp4": ServedFile(path: "\(rig.directory)/\(rig.name)")], peers: ["127.0.0.1"])
            #expect(odd.url(for: "a b/ü%.mp4").hasSuffix("/a%20b%2F%C3%BC%25.mp4"))
            let again = try rig.server.publish([rig.name: ServedFile(path: "\(rig.directory)/\(rig.name)")], peers: ["127.0.0.1"])
            #expect(again.url(for: rig.name) != url, "each publication draws its own token")
            #expect(ServedMediaNames.shared.redact("playing \(url) now") == "playing movie.mp4 now", "views show the name, never the token")
            #expect(ServedMediaNames.shared.redact("http://example.com/\(String(repeating: "a", count: 32))/x.mp4")
                    == "http://example.com/\(String(repeating: "a", count: 32))/x.mp4", "a URL castline did not publish is left alone")
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
            let zeros = String(repeating: "0", count: 32)
            for target in ["/\(zeros)/\(name)", "/\(rig.token)/other.mp4", "/\(name)", "/",
                           "/\(rig.token)", "/\(rig.token)/", "/\(rig.token)/\(name)/x",
                           "/\(rig.token)/%zz", "/\(rig.token.prefix(16))/\(name)"] {
                #expect(try rig.request("GET", target).status == 404, "\(target)")
            }
            #expect(try rig.request("POST", "/\(zeros)/\(name)").status == 404)
            #expect(try rig.request("GET", rig.target + "?t=1").status == 200, "a query is ignored")
        }
    }

    @Test("a file answers only the address it was published for; others get 404, counted")
    func onlyItsPeer() async throws {
        try await withMediaServerRig { rig in
            #expect(try rig.request("GET", headers: ["Range: bytes=0-9"]).status == 206)
            let stranger = try rig.request("GET", headers: ["Range: bytes=0-9"], source: "127.0.0.2")
            #expect(stranger.status == 404 && stranger.body == Array("not found\n".utf8))
            #expect(try rig.request("OPTIONS", source: "127.0.0.2").status == 404)
            #expect(rig.server.refusals.peer == 2)
        }
    }

    @Test("a revoked file → 404 at once; other publications go on")
    func revoked() async throws {
        try await withMediaServerRig { rig in
            let other = try rig.server.publish(["b.mp4": ServedFile(path: "\(rig.directory)/\(rig.name)")], peers: ["127.0.0.1"])
            let otherTarget = MediaServerRig.target(of: other.url(for: "b.mp4"), server: rig.server)
            #expect(rig.server.publishedCount == 2)
            rig.publication.revoke()
            #expect(try rig.request("GET").status == 404)
            #expect(try rig.request("GET", otherTarget, headers: ["Range: bytes=0-0"]).status == 206)
            rig.publication.revoke()
            #expect(rig.server.publishedCount == 1, "revoking twice is harmless")
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

    @Test("the file is opened once, when published: removing, replacing or swapping in a symlink changes nothing served")
    func openedOnce() async throws {
        try await withMediaServerRig(size: 10) { rig in
            let path = "\(rig.directory)/\(rig.name)"
            unlink(path)
            #expect(try rig.request("GET").body == rig.contents, "removed: the published inode is still served")
            try MediaServerRig.write([1, 2, 3], to: path)
            #expect(try rig.request("GET").body == rig.contents, "replaced: still the published file")
            unlink(path)
            try MediaServerRig.write(Array("secret".utf8), to: "\(rig.directory)/secret.txt")
            defer { unlink("\(rig.directory)/secret.txt") }
            #expect(symlink("\(rig.directory)/secret.txt", path) == 0)
            #expect(try rig.request("GET").body == rig.contents, "a symlink swapped in is never followed")
        }
    }

    @Test("publishing refuses a symlink anywhere in the path, '..', and a path outside its root")
    func publishRefusals() async throws {
        try await withMediaServerRig(size: 10) { rig in
            let link = "\(rig.directory)/link.mp4"
            #expect(symlink("\(rig.directory)/\(rig.name)", link) == 0)
            defer { unlink(link) }
            #expect(throws: OpenedMediaFile.Failure.self) { try rig.server.publish(["l": ServedFile(path: link)], peers: ["127.0.0.1"]) }
            #expect(throws: OpenedMediaFile.Failure.self) {
                try rig.server.publish(["l": ServedFile(path: "\(rig.directory)/../\(rig.directory.split(separator: "/").last!)/\(rig.name)")], peers: ["127.0.0.1"])
            }
            #expect(throws: OpenedMediaFile.Failure.self) {
                try rig.server.publish(["l": ServedFile(path: "\(rig.directory)/\(rig.name)", root: "/nonexistent-root")], peers: ["127.0.0.1"])
            }
            let beneath = try rig.server.publish(["m": ServedFile(path: "\(rig.directory)/\(rig.name)", root: rig.directory)], peers: ["127.0.0.1"])
            #expect(try rig.request("GET", MediaServerRig.target(of: beneath.url(for: "m"), server: rig.server)).body == rig.contents)
            #expect(rig.server.publishedCount == 2, "a refused publication publishes nothing")
        }
    }

    @Test("a published folder serves its plain files (a transcoder's segments), never a link inside it")
    func folder() async throws {
        try await withMediaServerRig(size: 10) { rig in
            let folder = "\(rig.directory)/hls"
            #expect(mkdir(folder, 0o700) == 0)
            defer { rmdir(folder) }
            let segment = "\(folder)/seg1.m4s"
            try MediaServerRig.write([9, 8, 7], to: segment)
            defer { unlink(segment) }
            let publication = try rig.server.publish(["hls/": ServedFile(path: folder, contentType: "application/x-mpegURL")], peers: ["127.0.0.1"])
            let base = MediaServerRig.target(of: publication.url(for: "hls"), server: rig.server)
            let got = try rig.request("GET", base + "/seg1.m4s")
            #expect(got.status == 200 && got.body == [9, 8, 7] && got.header("Content-Type") == "video/iso.segment")
            try MediaServerRig.write([1], to: "\(folder)/seg2.m4s")
            defer { unlink("\(folder)/seg2.m4s") }
            #expect(try rig.request("GET", base + "/seg2.m4s").body == [1], "files appear while the folder is served")
            #expect(symlink("\(rig.directory)/\(rig.name)", "\(folder)/seg3.m4s") == 0)
            defer { unlink("\(folder)/seg3.m4s") }
            #expect(try rig.request("GET", base + "/seg3.m4s").status == 404)
            #expect(try rig.request("GET", base + "/..%2F\(rig.name)").status == 404)
        }
    }

    @Test("a pipelining client that never reads its answers holds one response, not one open file per request")
    func pipeliningHeldBack() async throws {
        try await withMediaServerRig(size: 4_000_000) { rig in
            let client = try rig.client()
            defer { client.close() }
            let fdsBefore = openDescriptors()
            let request = RawHTTPClient.requestText("GET", rig.target)
            // 400 whole-file requests in one go, never read: the first answer fills the socket buffers.
            try? client.send(String(repeating: request, count: 400))
            _ = await pollUntil(timeout: 2) { rig.server.requests.count >= 1 }
            let fdsDuring = openDescriptors()
            #expect(fdsDuring - fdsBefore <= 3, "open descriptors grew from \(fdsBefore) to \(fdsDuring)")
            #expect(rig.server.requests.count <= 2, "\(rig.server.requests.count) answers while the client reads none")
        }
    }

    @Test("connections are bounded per address, and one that brings no whole request in time is closed")
    func connectionBounds() async throws {
        var limits = MediaFileServer.Limits()
        limits.connections.perPeer = 2
        limits.idleTimeout = 0.3
        try await withMediaServerRig(size: 10, limits: limits) { rig in
            let first = try rig.client(), second = try rig.client()
            defer { first.close(); second.close() }
            let third = try rig.client()
            defer { third.close() }
            #expect(try third.readsEOF(), "the third connection from one address is closed")
            #expect(await pollUntil(timeout: 2) { rig.server.refusals.connectionsPerPeer == 1 })
            // A header line, then silence: closed by the request bound.
            try first.send("GET \(rig.target) HTTP/1.1\r\n")
            #expect(try first.readsEOF())
            #expect(await pollUntil(timeout: 2) { rig.server.refusals.idle >= 2 })
            let fresh = try rig.client()
            defer { fresh.close() }
            #expect(try fresh.request("GET", rig.target).status == 200, "freed slots are usable again")
        }
    }

    /// This process's open descriptors.
    func openDescriptors() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(dir) }
        var count = 0
        while readdir(dir) != nil { count += 1 }
        return count
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
            #expect(rig.publication.url(for: rig.name).hasPrefix("http://[::1]:\(rig.server.port)/"))
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
