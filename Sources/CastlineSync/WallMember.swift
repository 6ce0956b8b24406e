import CastCore

/// A TV of a wall as the wall drives it: the hub's warm session to the device behind a few
/// calls, so ``VideoWall`` decides and the session does the I/O (tests give their own).
package protocol WallMember: Sendable {
    /// The device's id (its uuid), the key of its calibration.
    var id: String { get }
    var name: String { get }
    var model: String { get }
    /// The playback rates the model accepts (SET_PLAYBACK_RATE).
    var rates: ClosedRange<Double> { get }
    /// Launches the app when needed, loads `item` paused at `position`, and returns once the
    /// device reports PAUSED (buffered), or throws why not.
    func load(_ item: WallItem, position: Double, timeout: Double) async throws(WallError)
    /// One media GET_STATUS on the warm session, with the instants its request was written and
    /// its reply read where the session knows them (nil: the caller times the call).
    func status() async -> (WallReading, RoundTripFilter.Sample?)
    /// PLAY; the instant it was written where the session knows it (nil: not sent).
    func play() async -> Double?
    /// Seek to `position` and play from there.
    func seek(to position: Double) async -> Bool
    func setRate(_ rate: Double) async -> Bool
    /// Returns once the device is reachable (true), or after `timeout` (false).
    func awaitReachable(timeout: Double) async -> Bool
}

/// What a media GET_STATUS told.
package enum WallReading: Sendable, Equatable {
    case status(MediaStatus)
    /// The app runs no media session (or another app runs).
    case noMedia
    /// The request failed: the session is down.
    case unreachable
}

/// One item of a wall's playlist.
package struct WallItem: Sendable, Equatable {
    package var url: String
    package var contentType: String
    package var title: String?
    package init(url: String, contentType: String, title: String? = nil) {
        self.url = url
        self.contentType = contentType
        self.title = title
    }
}

package struct WallError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
