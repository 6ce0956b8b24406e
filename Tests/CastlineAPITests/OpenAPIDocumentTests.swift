import CastCore
@testable import CastlineAPI
import CastlineDaemon
import Testing

/// `docs/api/openapi.yaml` and the route table: the committed document is what the table and the
/// template make (what `make check-openapi` checks in CI), a route added to the table shows in
/// it, and the generator refuses a template that lacks what a route refers to.
@Suite struct OpenAPIDocumentTests {
    static let repository = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/"))

    static func read(_ path: String) throws -> String {
        let bytes = try #require(try SmallFile.read(path: repository + "/" + path, limit: 1 << 20))
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func theCommittedDocumentIsTheTablesOwn() throws {
        let generated = try OpenAPIDocument.generate(template: try Self.read("docs/api/openapi.template.yaml"))
        #expect(generated == (try Self.read("docs/api/openapi.yaml")), "docs/api/openapi.yaml is stale: run make openapi")
    }

    @Test func everyRouteHasItsOperationAndEveryFieldItsProperty() throws {
        let document = try OpenAPIDocument.generate(template: try Self.read("docs/api/openapi.template.yaml"))
        for route in ControlAction.table {
            #expect(document.contains("\n  \(route.path):\n"), "\(route.path)")
            #expect(document.contains("\n      operationId: \(route.operationID)\n"), "\(route.operationID)")
            for field in route.body.fields + route.query {
                #expect(document.contains(" \(OpenAPIDocument.key(field.name)): {") || document.contains("name: \(field.name), in: query"),
                        "\(route.path): \(field.name)")
            }
        }
        // The key the hand-written document lacked.
        #expect(document.contains("listen: {type: boolean"))
    }

    @Test func aRouteAddedToTheTableChangesTheDocument() throws {
        let template = try Self.read("docs/api/openapi.template.yaml")
        let extra = ControlRoute(.play, .POST, "/v1/devices/{device}/dance", name: "dance", operationID: "dance", summary: "Dance.",
                                 body: .object(RouteObject([.boolean("wildly", "Arms too.")], required: false)),
                                 responses: [("200", "Device")]) { r throws(ControlError) in .command(.play(r["device"])) }
        let document = try OpenAPIDocument.generate(template: template, table: ControlAction.table + [extra])
        #expect(document != (try Self.read("docs/api/openapi.yaml")))
        #expect(document.contains("  /v1/devices/{device}/dance:\n    parameters: [{$ref: \"#/components/parameters/Device\"}]\n    post:\n      operationId: dance\n"))
        #expect(document.contains("wildly: {type: boolean, description: Arms too.}"))
    }

    @Test func aTemplateWithoutWhatARouteNamesIsRefused() throws {
        let template = try Self.read("docs/api/openapi.template.yaml")
        #expect(throws: OpenAPIDocument.Failure.self) { try OpenAPIDocument.generate(template: template.replacing("{{paths}}", with: "")) }
        #expect(throws: OpenAPIDocument.Failure.self) {
            try OpenAPIDocument.generate(template: template.replacing("    Metrics: {", with: "    Prometheus: {"))
        }
        #expect(throws: OpenAPIDocument.Failure.self) {
            try OpenAPIDocument.generate(template: template.replacing("    JobName:\n", with: "    Name:\n"))
        }
    }

    @Test func scalarsAreQuotedWhereYAMLWouldReadThemOtherwise() {
        #expect(OpenAPIDocument.scalar("Queue control.") == "Queue control.")
        #expect(OpenAPIDocument.scalar("Items after media, as one queue.") == "\"Items after media, as one queue.\"")
        #expect(OpenAPIDocument.scalar("`loaded` or not") == "\"`loaded` or not\"")
        #expect(OpenAPIDocument.scalar("say \"hi\": now") == #""say \"hi\": now""#)
        #expect(OpenAPIDocument.scalar("off") == "\"off\"")
        #expect(OpenAPIDocument.key("off") == "\"off\"" && OpenAPIDocument.key("muted") == "muted")
    }
}
