import CastCore
@testable import CastPluginHost
import CastTestSupport
import Testing

/// A crash report's frames named from the plugin library's symbol table: a static function (in
/// no dynamic symbol table) found by its offset; frames of other libraries, offsets outside
/// every function and files that are not ELF left as they are.
@Suite struct ELFSymbolsTests {
    static let crashes = BuiltProducts.library("TestPluginCrashesInChannel")

    @Test func aStaticFunctionIsNamedWithItsOffset() throws {
        let symbols = try #require(ELFSymbols(path: Self.crashes))
        let onMessage = try #require(symbols.functions.first { $0.name == "channel_on_message" })
        let offset = onMessage.start - symbols.base + 36
        let found = try #require(symbols.function(atOffset: offset))
        #expect(found.name == "channel_on_message" && found.offset == 36)
        let hex = String(offset, radix: 16)
        let frames = ["(libTestPluginCrashesInChannel.so + 0x\(hex))", "(libc.so.6 + 0x\(hex))",
                      "castline_plugin_v1_describe + 3 (libTestPluginCrashesInChannel.so + 0x10)", "7f00deadbeef"]
        #expect(ELFSymbols.symbolised(frames, library: Self.crashes) == [
            "channel_on_message + 36 (libTestPluginCrashesInChannel.so + 0x\(hex))", frames[1], frames[2], frames[3],
        ])
    }

    @Test func whatIsNotAnELFLibraryNamesNothing() throws {
        #expect(ELFSymbols(bytes: Array("not an ELF file at all, but long enough to have a header of 64 bytes......".utf8)) == nil)
        let whole = try #require(try SmallFile.read(path: Self.crashes, limit: ELFSymbols.maximumBytes))
        #expect(ELFSymbols(bytes: Array(whole.prefix(200))) == nil, "cut short: its section headers are gone")
        #expect(ELFSymbols.symbolised(["(castline.yaml + 0x10)"], library: "/nonexistent/castline.yaml") == ["(castline.yaml + 0x10)"])
    }
}
