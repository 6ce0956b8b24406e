/// castline's own receiver page (`receiver/castline-receiver.html`): an operator hosts it and
/// registers it under an app id of their own; it shows a page in a frame and keeps itself alive
/// by playing silent media, which resets the idle timer of every model (docs/receiver.md).
public enum CastlineReceiver {
    /// The namespace it takes pages on: `{"url", "force", "reload", "reload_time"}`, as DashCast.
    public static let namespace = "urn:x-cast:net.castline.page"
    /// The app id the simulator knows it under (a real one is the operator's).
    public static let simulatorAppID = "CA5711FE"
}
