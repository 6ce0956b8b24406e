internal import CCastPluginABI
import CastCore
import CastLogging

/// Why no media-format feature could analyse an input.
public struct MediaFormatProbeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension PluginHost {
    /// Asks the media-format features, highest rank first, those declaring the content type (or
    /// `*`) only, until one answers. The answer's JSON is checked; invalid JSON from a plugin is
    /// refused with one error line and the next feature is asked. Pure plugins: any thread.
    public func probeMediaFormat(url: String?, contentType: String?, body: [UInt8]? = nil) -> Result<MediaFormatInfo, MediaFormatProbeError> {
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
            guard case .mediaFormat(let vtable) = feature.vtable else { continue }
            let collector = JSONCollector()
            let errorText = PluginErrorText()
            let raw = Unmanaged.passUnretained(collector).toOpaque()
            let rc: Int32 = withOptionalCString(url) { u in
                withOptionalCString(contentType) { c in
                    let call = { (bytes: UnsafePointer<UInt8>?, count: Int) -> Int32 in
                        vtable.probe!(feature.userdata.pointer, u, c, bytes, count, { ctx, json, length in
                            guard let ctx, let json else { return }
                            let collector = Unmanaged<JSONCollector>.fromOpaque(ctx).takeUnretainedValue()
                            collector.bytes = Array(UnsafeRawBufferPointer(start: json, count: length))
                        }, raw, errorText.buffer)
                    }
                    if let body { return body.withUnsafeBufferPointer { call($0.baseAddress, $0.count) } }
                    return call(nil, 0)
                }
            }
            guard rc == 0 else {
                reasons.append("\(feature.qualifiedName): \(errorText.text ?? "status \(rc)")")
                continue
            }
            guard let bytes = collector.bytes else {
                reasons.append("\(feature.qualifiedName): returned no report")
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

/// Receives the JSON a probe emits (called synchronously inside the probe).
final class JSONCollector {
    var bytes: [UInt8]?
}

func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}
