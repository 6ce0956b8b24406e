import CastCore
import CastPluginHost
import CastTestSupport
import Foundation
import Testing

/// The media-formats plugin reading containers with libavformat, through the real loader: a file
/// by path, the head of a file as a URL's Range read gives it, and inputs that must not hang or
/// mislead it (a FIFO, bytes that are no container). The media is made here with ffmpeg.
@Suite struct ContainerProbeTests {
    static func ffmpeg(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-hide_banner", "-loglevel", "error", "-y"] + arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("a WebM by path and by its head: VP9 and Opus with size, rate and bit depth; the content type from the container")
    func webm() throws {
        let scratch = ScratchFolder("container-probe")
        defer { scratch.remove() }
        let path = scratch.path + "/clip.bin"  // no telling extension: the container decides
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
                         "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-c:a", "libopus", "-f", "webm", path])
        let rig = try MediaFormatsPluginTests.host()
        let byPath = try rig.host.probeMediaFormat(url: path, contentType: nil).get()
        #expect(byPath.contentType == "video/webm" && byPath.container == "matroska,webm")
        #expect(byPath.videoInfo == VideoInfo(width: 320, height: 240, hdrType: .sdr))
        #expect(byPath.streams.map(\.codec) == ["vp9", "opus"])
        #expect(byPath.streams[0].frameRate == 25 && byPath.streams[0].bitDepth == 8 && byPath.streams[0].profile == "Profile 0")
        #expect(byPath.videoCodecs.first?.hasPrefix("vp09.00.") == true)
        let head = try #require(FileManager.default.contents(atPath: path)).prefix(64 * 1024)
        let byHead = try rig.host.probeMediaFormat(url: "http://127.0.0.1:9/clip", contentType: nil, body: Array(head)).get()
        #expect(byHead.streams.map(\.codec) == ["vp9", "opus"] && byHead.videoInfo == byPath.videoInfo)
    }

    @Test("a FIFO is refused at once, garbage reads as no container; neither blocks the host")
    func boundedInputs() throws {
        let scratch = ScratchFolder("container-probe-bad")
        defer { scratch.remove() }
        let fifo = scratch.path + "/stuck.mkv"
        #expect(mkfifo(fifo, 0o600) == 0)
        let rig = try MediaFormatsPluginTests.host()
        let started = Date()
        let stuck = try rig.host.probeMediaFormat(url: fifo, contentType: nil).get()
        #expect(stuck.streams.isEmpty && stuck.notes.contains { $0.contains("not a regular file") })
        let junk = try rig.host.probeMediaFormat(url: "http://127.0.0.1:9/x.mp4", contentType: nil, body: Array(repeating: 0x41, count: 100_000)).get()
        #expect(junk.streams.isEmpty && junk.contentType == "video/mp4" && junk.notes.contains { $0.hasPrefix("container not read") })
        #expect(Date().timeIntervalSince(started) < 5)
    }
}
