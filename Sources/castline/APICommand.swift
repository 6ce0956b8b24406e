import ArgumentParser
import CastCore
import CastlineAPI
#if canImport(Glibc)
import Glibc
#endif

/// `castline api openapi` (hidden): prints docs/api/openapi.yaml as the route table makes it,
/// from the template (`make openapi` writes it, `make check-openapi` compares it in CI).
struct APICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api", abstract: "The control API's own documents (internal).", shouldDisplay: false,
        subcommands: [OpenAPICommand.self])
}

struct OpenAPICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi", abstract: "Print the OpenAPI document generated from the route table and the template.")

    @Option(name: .long, help: ArgumentHelp("The template.", valueName: "file"))
    var template = "docs/api/openapi.template.yaml"

    func run() throws {
        let text: String
        do {
            guard let bytes = try SmallFile.read(path: template, limit: 1 << 20) else { throw SmallFile.Failure(path: template, step: .open, code: ENOENT) }
            text = String(decoding: bytes, as: UTF8.self)
        } catch {
            printError("castline: \(error)")
            throw ExitCode.failure
        }
        do {
            print(try OpenAPIDocument.generate(template: text), terminator: "")
        } catch {
            printError("castline: \(template): \(error)")
            throw ExitCode.failure
        }
    }
}
