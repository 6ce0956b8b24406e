import CastPluginKit

/// The `media-formats` plugin: one media-format feature, `manifest`, that reads URLs, file
/// names, content types, HLS/DASH manifests and codec strings (see ``MediaFormatAnalyzer``), and
/// containers with libavformat (see ``ContainerProbe``).
enum MediaFormatsPlugin: CastlinePlugin {
    static let id = "media-formats"
    static let version = "1.0.0"
    static let summary = "contentType, streamType, streams and VideoInfo from containers (libavformat), URLs, HLS/DASH manifests and codec strings"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [.mediaFormat(ManifestFormat.self, id: "manifest")]
}

/// The feature: pure, safe to call from any thread.
enum ManifestFormat: MediaFormatPlugin {
    static let contentTypes = ["*"]

    static func probe(url: String?, contentType: String?, body: UnsafeBufferPointer<UInt8>?) throws(PluginError) -> String {
        let bytes = body.map { Array($0.prefix(MediaFormatAnalyzer.maxScanBytes + 1)) }
        var report = MediaFormatAnalyzer.analyze(url: url, contentType: contentType, body: bytes)
        ContainerReport.enrich(&report, url: url, body: body)
        return report.json()
    }
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(MediaFormatsPlugin.self) }
