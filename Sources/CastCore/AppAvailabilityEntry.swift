/// One app's answer in a GET_APP_AVAILABILITY reply (`availability: {<appId>: APP_AVAILABLE}`),
/// kept as ordered pairs.
public struct AppAvailabilityEntry: Hashable, Sendable {
    public var appId: String
    public var availability: AppAvailability

    public init(appId: String, availability: AppAvailability) {
        self.appId = appId
        self.availability = availability
    }
}
