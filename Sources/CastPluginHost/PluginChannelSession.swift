import CastCore

/// The session a channel instance is opened on, as the host needs it: the device, the feature's
/// namespaces there, the app's messages and events, the plugin's sends. The host knows nothing of
/// sessions: CastPluginSession's `SessionChannelBinding` is this over CastSender's `CastSession`.
///
/// One per channel instance. ``attach(namespaces:to:)`` and ``detach()`` come from the instance's
/// opening and teardown; ``send(namespace:destination:payload:)`` is the instance's host-services
/// `send` callback itself (called on the plugin's thread, after `attach`).
package protocol PluginChannelSession: AnyObject, Sendable {
    /// The device's id: in the channel's records and its `session_json`.
    var deviceID: String { get async }

    /// Attaches `namespaces` to the session and returns the app it talks to now (nil: none runs).
    /// From this call on, the app's messages on them go to `endpoint.deliver`, straight from the
    /// session's delivery and in order, and what happens to the app (from the one returned) to
    /// `endpoint.appEvent`.
    func attach(namespaces: [String], to endpoint: PluginChannelEndpoint) async -> ApplicationInfo?

    /// The plugin's `send_message` on one of the namespaces, after the host checked the namespace
    /// and the JSON: routed (``PluginChannel/route(destination:appTransportID:sessionEnded:)``)
    /// and queued on the session's connection before it returns, so that sends go out in the
    /// order they were made. The ABI status (`CASTLINE_OK`: queued); a refusal is also told to
    /// `endpoint.refused`, a write that fails after it was queued to `endpoint.failed`.
    func send(namespace: String, destination: String?, payload: String) -> Int32

    /// Detaches the namespaces and ends the app's events. Idempotent.
    func detach() async
}

/// A channel instance as its session reaches it (``PluginChannelSession/attach(namespaces:to:)``).
package struct PluginChannelEndpoint: Sendable {
    /// One of the app's messages on `namespace` from `source` (`text` nil: a binary payload).
    package var deliver: @Sendable (_ namespace: String, _ source: String, _ text: String?) -> Void
    /// What happened to the app, for the plugin's `on_app_event` (ABI 1.2).
    package var appEvent: @Sendable (PluginAppNotice) -> Void
    /// A send refused before it was queued (its status is what `send` returns).
    package var refused: @Sendable (_ namespace: String, _ refusal: PluginChannel.SendRefusal) -> Void
    /// A send the session could not take, or that the connection failed after it was queued.
    package var failed: @Sendable (_ namespace: String, _ error: any Error) -> Void
}
