import ArgumentParser
import CastCore
import CastHTTP
import CastlineLocalMedia
import CastPluginHost
import CastTransport
import Glibc

/// `castline probe FILE|URL [--json] [--model NAME]`: what is inside a media file (container,
/// streams, VideoInfo) as the media-formats plugin reads it, and with --model what castline would
/// do with it for that device family.
struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Show a media file's container and streams (codecs, profiles, size, HDR) and what a device would need.",
        discussion: """
            A local file is read by the media-formats plugin with libavformat, bounded in bytes and time. For an \
            http(s) URL the first \(headBytes / (1024 * 1024)) MiB are fetched with a Range request and read \
            (an MP4 whose index is at its end then shows no streams). --model names a device model \
            (e.g. "Chromecast", "Chromecast Ultra", "Google Nest Mini") and adds the decision castline makes \
            before a LOAD: play as is, remux, transcode, or refuse.
            """ + "\n" + CastlineExit.summary)

    static let headBytes = 4 * 1024 * 1024

    @Argument(help: "A local file or an http(s) URL.") var media: String
    @Flag(name: .long, help: "Print the report as JSON.") var json = false
    @Option(name: .long, help: "A device model name: also print the play/remux/transcode/refuse decision for it.") var model: String?
    @Option(name: .long, help: "Config file (YAML).") var config: String?
    @Option(name: .long, help: "A folder or .so file to load plugins from. Repeatable.") var pluginPath: [String] = []

    func run() async throws {
        let environment = try CommandEnvironment(options: DeviceRequest(config: config, pluginPath: pluginPath), featureKinds: [.mediaFormat])
        do { try await report(environment) } catch {
            await environment.shutdown()
            throw error
        }
        await environment.shutdown()
    }

    private func report(_ environment: CommandEnvironment) async throws {
        var probed: String = media
        var head: [UInt8]?
        if CastCommand.isURL(media) {
            guard let url = HTTPURL(media) else {
                printError("castline probe: \(media) is not a usable URL")
                throw CastlineExit.usage
            }
            switch await HTTPExchange.request(.GET, url: url, headers: [("Range", "bytes=0-\(Self.headBytes - 1)")], timeout: 10,
                                              maximumBody: Self.headBytes, group: environment.group) {
            case .success(let answer) where answer.status == 200 || answer.status == 206:
                head = answer.body
            case .success(let answer):
                printError("castline probe: \(media) answered HTTP \(answer.status)")
                throw CastlineExit.failure
            case .failure(let failure):
                printError("castline probe: \(media): \(failure)")
                throw CastlineExit.failure
            }
        } else {
            do { probed = try LocalMediaFile.open(media).path } catch {
                printError("castline probe: \(media): \(error)")
                throw CastlineExit.usage
            }
        }
        let format: MediaFormatInfo
        switch environment.plugins.probeMediaFormat(url: probed, contentType: nil, body: head) {
        case .success(let info): format = info
        case .failure(let error):
            printError("castline probe: \(error)")
            throw CastlineExit.failure
        }
        let plan = model.map { MediaPlan.decide(format, family: DeviceCapabilityTable.shared.family(model: $0, videoOut: nil)) }
        if json {
            var object = ProbeReport.json(format)
            if let plan { object.append(key: "plan", value: plan.json) }
            printLine(JSONValue.object(object).serialized())
        } else {
            for line in ProbeReport.lines(format) { printLine(line) }
            if let plan, let model { printLine("\(model): \(plan.summary)") }
        }
    }
}

/// The probe's findings for people and as JSON.
enum ProbeReport {
    static func json(_ f: MediaFormatInfo) -> JSONObject {
        var o = JSONObject()
        func add(_ key: String, _ value: JSONValue?) { if let value { o.append(key: key, value: value) } }
        add("contentType", f.contentType.map(JSONValue.string))
        add("streamType", f.streamType.map { .string($0.rawValue) })
        add("container", f.container.map(JSONValue.string))
        add("duration", f.duration.map(JSONValue.double))
        add("videoInfo", f.videoInfo?.json)
        add("hdrFormat", f.hdrFormat.map(JSONValue.string))
        add("videoCodecs", .array(f.videoCodecs.map(JSONValue.string)))
        add("streams", .array(f.streams.map(\.json)))
        add("notes", .array(f.notes.map(JSONValue.string)))
        return o
    }

    static func lines(_ f: MediaFormatInfo) -> [String] {
        var lines: [String] = []
        var head = f.contentType ?? "unknown content type"
        if let container = f.container { head += " (\(container))" }
        if let duration = f.duration { head += ", \(duration.rounded2.formatted) s" }
        lines.append(head)
        if let video = f.videoInfo { lines.append("VideoInfo: \(video.width)x\(video.height) \(video.hdrType?.rawValue ?? "")\(video.badge.isEmpty ? "" : " [\(video.badge)]")") }
        for stream in f.streams { lines.append("  " + stream.summary) }
        for note in f.notes { lines.append("  note: \(note)") }
        return lines
    }
}
