import CastCore
import CastHTTP
import Testing

/// ``HTTPURL``: the one URL parser of castline's HTTP clients.
@Suite struct HTTPURLTests {
    @Test func partsOfHTTPAndHTTPSURLs() throws {
        let plain = try #require(HTTPURL("http://127.0.0.1:8080/dash.html?x=1#top"))
        #expect(!plain.secure && plain.host == "127.0.0.1" && plain.port == 8080 && plain.target == "/dash.html?x=1")
        let secure = try #require(HTTPURL("HTTPS://user@board.example"))
        #expect(secure.secure && secure.host == "board.example" && secure.port == 443 && secure.target == "/")
        let v6 = try #require(HTTPURL("http://[::1]:81?q"))
        #expect(v6.host == "::1" && v6.port == 81 && v6.target == "/?q" && v6.description == "http://[::1]:81/?q")
    }

    @Test(arguments: [
        "ftp://a/", "http://", "http://a:0/", "http://a:99999/", "http://[::1/", "https://a b/", "https://\r\u{C6}l7Q[%/",
        "http://exa\u{E9}mple.com/", "http://a/\u{7}", "http://a<b/", "http://::1/",
    ])
    func notHTTPURLs(text: String) { #expect(HTTPURL(text) == nil) }

    /// What the simulator's media fetch reports for a URL it cannot fetch.
    @Test func whyATextIsNoURL() {
        #expect(HTTPURL.parse("ftp://127.0.0.1/a.mp4") == .failure(.scheme("ftp")))
        #expect(HTTPURL.parse("FTP://a/").map(\.host) == .failure(.scheme("ftp")))
        #expect(HTTPURL.parse("http://127.0.0.1:99999/a") == .failure(.port))
        #expect(HTTPURL.parse("http://[::1]:x/a") == .failure(.port))
        for text in ["media.local/a.mp4", "http://[::1/a", "http:///a", "://a", "http://[::1]x/"] {
            #expect(HTTPURL.parse(text) == .failure(.malformed), "\(text)")
        }
        #expect(HTTPURL.Invalid.scheme("https").description == "unsupported scheme https")
        #expect(HTTPURL.Invalid.port.description == "invalid port in URL" && HTTPURL.Invalid.malformed.description == "invalid URL")
    }

    @Test func hostHeaderAndConnectHost() throws {
        #expect(try #require(HTTPURL("http://a.example/x")).authority == "a.example")
        #expect(try #require(HTTPURL("https://a.example:8443/x")).authority == "a.example:8443")
        #expect(try #require(HTTPURL("https://a.example:443/x")).description == "https://a.example/x")
        let zoned = try #require(HTTPURL("http://[fe80::1%25eth0]:8000/a.mp4"))
        #expect(zoned.host == "fe80::1%25eth0" && zoned.connectHost == "fe80::1%eth0" && zoned.authority == "[fe80::1%25eth0]:8000")
        #expect(HTTPURL(secure: false, host: "fe80::1%eth0", port: 8008, target: "/").connectHost == "fe80::1%eth0")
        #expect(HostPort.name(host: "::1", port: 80) == "[::1]:80" && HostPort.name(host: "10.0.0.5", port: 8009) == "10.0.0.5:8009")
    }

    @Test func redirectsResolveAgainstTheURL() throws {
        let base = try #require(HTTPURL("http://a.example:8080/boards/lobby.html"))
        #expect(base.resolving("/dash.html")?.description == "http://a.example:8080/dash.html")
        #expect(base.resolving("other.html")?.description == "http://a.example:8080/boards/other.html")
        #expect(base.resolving("https://b.example/x")?.description == "https://b.example/x")
        #expect(base.resolving("//c.example/y")?.description == "http://c.example/y")
    }
}
