internal import CCastPluginABI
import CastCore
import CastLogging
import Dispatch
import Synchronization

/// Why no media-format feature could analyse an input.
package struct MediaFormatProbeError: Error, Sendable, Equatable, CustomStringConvertible {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}

extension PluginHost {
    /// Asks the media-format features, highest rank first, those declaring the content type (or
    /// `*`) only, until one answers. The answer's JSON is checked; invalid JSON from a plugin is
    /// refused with one error line and the next feature is asked. Pure plugins: any thread. Each
    /// probe runs on a thread of its own and is waited for at most `plugins.call_timeout`; a
    /// feature whose probe overran is disabled (logged once) and the next one is asked.
    package func probeMediaFormat(url: String?, contentType: String?, body: [UInt8]? = nil) -> Result<MediaFormatInfo, MediaFormatProbeError> {
        let candidates = features(of: .mediaFormat)
            .filter { f in f.declarations.contains("*") || contentType.map { ct in f.declarations.contains { $0.lowercased() == ct.lowercased() } } ?? false }
            .sorted { $0.rank > $1.rank }
        guard !candidates.isEmpty else {
            let loaded = plugins.isEmpty
                ? "no plugin at all; searched \(configuration.searchPath.entries.map(\.path).joined(separator: ", "))"
                : "loaded plugins: \(plugins.map(\.id).joined(separator: ", "))"
            return .failure(MediaFormatProbeError("no media-format plugin is loaded (\(loaded))"))
        }
        var reasons: [String] = []
        for feature in candidates {
            let report: Result<[UInt8], MediaFormatProbeError>
            switch feature.vtable {
            case .mediaFormat(let vtable): report = probeInProcess(feature, vtable, url: url, contentType: contentType, body: body)
            case .isolated(let helper): report = helper.probe(feature: feature.id, url: url, contentType: contentType, body: body)
            default: continue
            }
            let bytes: [UInt8]
            switch report {
            case .success(let value): bytes = value
            case .failure(let error):
                reasons.append("\(feature.qualifiedName): \(error.reason)")
                continue
            }
            do {
                let json = try JSONValue.parse(bytes: bytes)
                let info = try MediaFormatInfo(report: json)
                log.debug("media format probed", ["feature": .string(feature.qualifiedName), "contentType": .string(info.contentType ?? ""),
                                                  "streamType": .string(info.streamType?.rawValue ?? ""), "video": .string(info.videoInfo?.badge ?? "")])
                return .success(info)
            } catch {
                let reason = "\(feature.qualifiedName) returned an invalid report (\(error)); refused"
                log.error(reason, ["plugin": .string(feature.pluginID), "feature": .string(feature.id),
                                   "preview": .string(String(decoding: bytes.prefix(80), as: UTF8.self))])
                reasons.append(reason)
            }
        }
        return .failure(MediaFormatProbeError(reasons.joined(separator: "; ")))
    }
}

extension PluginHost {
    /// One in-process probe, on a thread of its own, waited for at most `plugins.call_timeout`:
    /// the report's bytes, or why not. A feature whose probe overran is disabled (the call may
    /// still hold its thread), logged once.
    func probeInProcess(_ feature: PluginFeature, _ vtable: castline_media_format_vtable, url: String?, contentType: String?,
                        body: [UInt8]?) -> Result<[UInt8], MediaFormatProbeError> {
        let key = "\(feature.qualifiedName)@\(UInt(bitPattern: feature.userdata.pointer))"
        if let stuck = stuckProbes.withLock({ $0[key] }) { return .failure(MediaFormatProbeError(stuck)) }
        let call = ProbeCall(vtable: vtable, userdata: feature.userdata, url: url, contentType: contentType, body: body)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            call.run()
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int(configuration.callTimeout * 1e9))) == .success else {
            let reason = "disabled: its probe did not return within \(PluginScan.seconds(configuration.callTimeout)) (plugins.call_timeout)"
            stuckProbes.withLock { $0[key] = reason }
            log.error("plugin \(feature.pluginID): media format \(feature.id) \(reason); other media-format features are asked", [
                "plugin": .string(feature.pluginID), "feature": .string(feature.id), "bound": .double(configuration.callTimeout),
            ])
            return .failure(MediaFormatProbeError(reason))
        }
        if let problem = call.collector.problem {
            log.error("plugin \(feature.pluginID): media format \(feature.id) \(problem)", [
                "plugin": .string(feature.pluginID), "feature": .string(feature.id), "problem": "bad_argument",
            ])
            return .failure(MediaFormatProbeError(problem))
        }
        guard call.status == 0 else { return .failure(MediaFormatProbeError(call.errorText.text ?? "status \(call.status)")) }
        guard let bytes = call.collector.bytes else { return .failure(MediaFormatProbeError("returned no report")) }
        return .success(bytes)
    }
}

/// Receives the JSON a probe emits (called synchronously inside the probe).
final class JSONCollector {
    var bytes: [UInt8]?
    /// Why an emit was refused (too long, unreadable).
    var problem: String?
}

/// Media-format features whose probe overran its bound, with why: never asked again (the call
/// may still hold its thread). Keyed by feature and instance; process-wide, as the plugin images are.
private let stuckProbes = Mutex<[String: String]>([:])

/// One probe: its inputs are owned here, so they stay valid for a call that outlives the caller
/// that gave up on it; the outcome is read after the call signalled.
final class ProbeCall: @unchecked Sendable {
    let url: String?
    let contentType: String?
    let body: [UInt8]?
    let collector = JSONCollector()
    let errorText = PluginErrorText()
    var status: Int32 = -1
    let vtable: castline_media_format_vtable
    let userdata: PluginUserData

    init(vtable: castline_media_format_vtable, userdata: PluginUserData, url: String?, contentType: String?, body: [UInt8]?) {
        self.vtable = vtable
        self.userdata = userdata
        self.url = url
        self.contentType = contentType
        self.body = body
    }

    func run() {
        let raw = Unmanaged.passUnretained(collector).toOpaque()
        let (vtable, userdata, errorText) = (self.vtable, self.userdata, self.errorText)
        status = withOptionalCString(url) { u in
            withOptionalCString(contentType) { c in
                let call = { (bytes: UnsafePointer<UInt8>?, count: Int) -> Int32 in
                    vtable.probe!(userdata.pointer, u, c, bytes, count, { ctx, json, length in
                        guard let ctx else { return }
                        let collector = Unmanaged<JSONCollector>.fromOpaque(ctx).takeUnretainedValue()
                        // The length is the plugin's word: bounded, and the bytes read safely.
                        guard (0...PluginMemory.Limit.json).contains(length) else {
                            collector.problem = "emitted a report of \(UInt(bitPattern: length)) bytes, over the \(PluginMemory.Limit.json) a report may have; refused"
                            return
                        }
                        guard let bytes = PluginMemory.bytes(json.map(UnsafeRawPointer.init), count: length) else {
                            collector.problem = "emitted a report (\(length) bytes) from unreadable memory; refused"
                            return
                        }
                        collector.bytes = bytes
                    }, raw, errorText.buffer)
                }
                if let body { return body.withUnsafeBufferPointer { call($0.baseAddress, $0.count) } }
                return call(nil, 0)
            }
        }
    }
}

func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}
