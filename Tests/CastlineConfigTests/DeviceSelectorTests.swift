import CastlineConfig
import Testing

@Suite struct DeviceSelectorTests {
    @Test func exactNamesIdsAndAliasesIgnoreCase() throws {
        let selector = try DeviceSelector("living room tv")
        #expect(!selector.isGlob)
        #expect(selector.matches(name: "Living Room TV", id: "5f3d"))
        #expect(try DeviceSelector("5f3d").matches(name: "Living Room TV", id: "5f3d"))
        #expect(try DeviceSelector("lobby").matches(name: "Lobby TV", id: "x", aliases: ["lobby"]))
        #expect(!selector.matches(name: "Living Room", id: "5f3d"))
    }

    @Test func globsMatchAnyOfTheNames() throws {
        let selector = try DeviceSelector("Lobby*")
        #expect(selector.isGlob)
        #expect(selector.matches(name: "Lobby Wall", id: "1"))
        #expect(selector.matches(name: "TV 3", id: "2", aliases: ["Lobby-3"]))
        #expect(!selector.matches(name: "Kitchen", id: "3"))
        #expect(throws: (any Error).self) { try DeviceSelector("Lobby[") }
    }
}
