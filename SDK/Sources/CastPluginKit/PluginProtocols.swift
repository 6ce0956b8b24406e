/// A log sink written in Swift. One instance per `open`; `write`/`flush` are called from the
/// host's worker thread for this sink, one call at a time.
public protocol LogSinkPlugin: AnyObject {
    /// `options` is the sink's JSON options object. Throw to refuse (the reason is shown).
    init(host: PluginHostServices, options: String) throws(PluginError)
    func write(_ records: UnsafeBufferPointer<castline_log_record>)
    func flush()
    /// Flush and release resources.
    func close()
    /// Records the sink itself lost.
    var dropped: UInt64 { get }
    /// Why the sink cannot deliver right now; nil when it delivers.
    var problem: String? { get }
}

extension LogSinkPlugin {
    public func flush() {}
    public var dropped: UInt64 { 0 }
    public var problem: String? { nil }
}

/// A media-format analyser: pure, may be called concurrently.
public protocol MediaFormatPlugin {
    /// Content types understood (`"*"` for any).
    static var contentTypes: [String] { get }
    /// Returns the JSON report object (see `castline_media_format_vtable.probe`).
    static func probe(url: String?, contentType: String?, body: UnsafeBufferPointer<UInt8>?) throws(PluginError) -> String
}

/// A custom-namespace channel: one instance per session, every call on the instance's queue.
public protocol ChannelPlugin: AnyObject {
    /// The namespaces it owns (`urn:x-cast:…`). Sending on any other is refused by the host.
    static var namespaces: [String] { get }
    /// `session` is `{"session_id","device_id","transport_id","app_id"}`.
    init(host: PluginHostServices, config: String, session: String) throws(PluginError)
    func didReceive(namespace: String, source: String, payload: String)
    /// Answer exactly once with `host.complete(command:json:)` or `host.fail(command:reason:)`.
    func command(id: UInt64, json: String)
    func close()
    /// ABI 1.2: the app the channel talks to stopped, runs again, or the link came back.
    /// `info` is `{"device_id","app_id","session_id","transport_id"}` (and `"reason"` for a
    /// stop). Optional: the default does nothing.
    func appDidChange(_ event: ChannelAppEvent, info: String)
}

extension ChannelPlugin {
    public func appDidChange(_ event: ChannelAppEvent, info: String) {}
}

/// What ``ChannelPlugin/appDidChange(_:info:)`` reports (`castline_app_event`).
public enum ChannelAppEvent: Int32, Sendable, CustomStringConvertible {
    /// The app stopped, closed, or another replaced it: sends to it are refused until it runs again.
    case stopped = 1
    /// An app runs again (a new app session); sends go to it.
    case relaunched = 2
    /// The link to the device came back after a drop.
    case sessionResumed = 3

    public var description: String {
        switch self {
        case .stopped: "app_stopped"
        case .relaunched: "app_relaunched"
        case .sessionResumed: "session_resumed"
        }
    }
}

/// A discovery source: reports with `host.deviceFound(json:)` / `deviceLost(id:)`.
public protocol DiscoveryPlugin: AnyObject {
    /// DNS-SD service types browsed (`_googlecast._tcp`).
    static var serviceTypes: [String] { get }
    /// `appIDs` is a JSON array of receiver app ids to check support for.
    init(host: PluginHostServices, config: String, appIDs: String) throws(PluginError)
    func stop()
}

/// A bridge (ABI 1.1): carries the daemon's control API and events elsewhere. One instance per
/// daemon; `didReply`, `didReceive` and `stop` run on the instance's queue, one at a time.
/// Requests go out with `host.controlRequest(id:method:path:body:)`, events are asked for with
/// `host.subscribeEvents(kinds:)`.
public protocol BridgePlugin: AnyObject {
    /// Start the bridge's own work (threads, network) and return: the call is bounded.
    init(host: PluginHostServices, config: String) throws(PluginError)
    /// The answer to request `id`: the HTTP API's status and JSON body.
    func didReply(request id: UInt64, status: Int, json: String)
    /// One hub event, a JSON object as `GET /v1/events` carries it.
    func didReceive(event json: String)
    func stop()
}

/// One feature of a Swift plugin.
public struct PluginFeatureDefinition: @unchecked Sendable {
    let kind: castline_feature_kind
    let id: String
    let rank: Int32
    let factory: FeatureFactory

    public static func logSink<T: LogSinkPlugin>(_ type: T.Type, id: String, rank: Int32 = 0) -> PluginFeatureDefinition {
        PluginFeatureDefinition(kind: CASTLINE_FEATURE_LOG_SINK, id: id, rank: rank, factory: FeatureFactory(
            declarations: [],
            makeSink: { host, options throws(PluginError) in try T(host: host, options: options) }))
    }

    public static func mediaFormat<T: MediaFormatPlugin>(_ type: T.Type, id: String, rank: Int32 = 0) -> PluginFeatureDefinition {
        PluginFeatureDefinition(kind: CASTLINE_FEATURE_MEDIA_FORMAT, id: id, rank: rank, factory: FeatureFactory(
            declarations: T.contentTypes,
            probe: { url, contentType, body throws(PluginError) in try T.probe(url: url, contentType: contentType, body: body) }))
    }

    public static func channel<T: ChannelPlugin>(_ type: T.Type, id: String, rank: Int32 = 0) -> PluginFeatureDefinition {
        PluginFeatureDefinition(kind: CASTLINE_FEATURE_CHANNEL, id: id, rank: rank, factory: FeatureFactory(
            declarations: T.namespaces,
            makeChannel: { host, config, session throws(PluginError) in try T(host: host, config: config, session: session) }))
    }

    public static func bridge<T: BridgePlugin>(_ type: T.Type, id: String, rank: Int32 = 0) -> PluginFeatureDefinition {
        PluginFeatureDefinition(kind: CASTLINE_FEATURE_BRIDGE, id: id, rank: rank, factory: FeatureFactory(
            declarations: [],
            makeBridge: { host, config throws(PluginError) in try T(host: host, config: config) }))
    }

    public static func discovery<T: DiscoveryPlugin>(_ type: T.Type, id: String, rank: Int32 = 0) -> PluginFeatureDefinition {
        PluginFeatureDefinition(kind: CASTLINE_FEATURE_DISCOVERY, id: id, rank: rank, factory: FeatureFactory(
            declarations: T.serviceTypes,
            makeDiscovery: { host, config, apps throws(PluginError) in try T(host: host, config: config, appIDs: apps) }))
    }
}

/// Builds instances of one feature; its pointer is the feature's `feature_userdata`.
final class FeatureFactory {
    let declarations: [String]
    var makeSink: ((PluginHostServices, String) throws(PluginError) -> any LogSinkPlugin)?
    var probe: ((String?, String?, UnsafeBufferPointer<UInt8>?) throws(PluginError) -> String)?
    var makeChannel: ((PluginHostServices, String, String) throws(PluginError) -> any ChannelPlugin)?
    var makeDiscovery: ((PluginHostServices, String, String) throws(PluginError) -> any DiscoveryPlugin)?
    var makeBridge: ((PluginHostServices, String) throws(PluginError) -> any BridgePlugin)?

    init(declarations: [String],
         makeSink: ((PluginHostServices, String) throws(PluginError) -> any LogSinkPlugin)? = nil,
         probe: ((String?, String?, UnsafeBufferPointer<UInt8>?) throws(PluginError) -> String)? = nil,
         makeChannel: ((PluginHostServices, String, String) throws(PluginError) -> any ChannelPlugin)? = nil,
         makeDiscovery: ((PluginHostServices, String, String) throws(PluginError) -> any DiscoveryPlugin)? = nil,
         makeBridge: ((PluginHostServices, String) throws(PluginError) -> any BridgePlugin)? = nil) {
        self.declarations = declarations
        self.makeSink = makeSink
        self.probe = probe
        self.makeChannel = makeChannel
        self.makeDiscovery = makeDiscovery
        self.makeBridge = makeBridge
    }
}

/// A Swift plugin: its identity, features and optional one-time setup.
///
/// ```swift
/// enum JSONSinkPlugin: CastlinePlugin {
///     static let id = "json-sink"; static let version = "1.0.0"
///     static let summary = "JSON Lines log sink"; static let license = "Apache-2.0"
///     static let features: [PluginFeatureDefinition] = [.logSink(JSONSink.self, id: "json")]
/// }
/// @_cdecl("castline_plugin_v1_describe")
/// public func describe() -> UnsafeRawPointer? { PluginExport.describe(JSONSinkPlugin.self) }
/// ```
public protocol CastlinePlugin {
    static var id: String { get }
    static var version: String { get }
    static var summary: String { get }
    static var license: String { get }
    static var features: [PluginFeatureDefinition] { get }
    /// Called once before any feature is used. Throw to disable the plugin.
    static func initialize(host: PluginHostServices, config: String) throws(PluginError)
    static func deinitialize()
}

extension CastlinePlugin {
    public static func initialize(host: PluginHostServices, config: String) throws(PluginError) {}
    public static func deinitialize() {}
}
