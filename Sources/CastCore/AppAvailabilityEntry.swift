/// One app's answer in a GET_APP_AVAILABILITY reply (`availability: {<appId>: APP_AVAILABLE}`),
/// kept as ordered pairs.
public struct AppAvailabilityEntry: Hashable, Sendable {
    public var appID: String
    public var availability: AppAvailability

    public init(appID: String, availability: AppAvailability) {
        self.appID = appID
        self.availability = availability
    }
}
