import CastCore

/// One row of the control plane's route table (``ControlAction/routes``): where an action's name,
/// HTTP method and path, body and query fields, documentation and decoding meet. The HTTP API
/// routes by it (`APIRoute`), direct mode decodes device actions by it, the OpenAPI document is
/// generated from it (`castline api openapi`), and tests hold MQTT's and the CLI's names to it.
/// The handler is ``ControlPlane``'s `run`, reached through the ``ControlCommand`` `decode` makes.
package struct ControlRoute: Sendable {
    package enum Method: String, Sendable, CaseIterable {
        case GET, POST, PUT, DELETE
    }

    package let action: ControlAction
    package let method: Method
    /// The path with `{parameter}` segments: `/v1/devices/{device}/cast`.
    package let path: String
    /// The action's name in logs, and for a device action its name everywhere: the path's last
    /// segment, MQTT's `command`, the CLI's action.
    package let name: String
    package let operationID: String
    package let summary: String
    package let description: String?
    package let query: [RouteField]
    package let body: RouteBody
    /// Status → the response's name in the template's `components/responses`; `default` is Error.
    package let responses: [(status: String, response: String)]
    /// The request → what it asks for; every problem is a ``ControlError`` naming the field.
    package let decode: @Sendable (RouteRequest) throws(ControlError) -> RouteTarget

    package init(_ action: ControlAction, _ method: Method, _ path: String, name: String, operationID: String, summary: String,
                 description: String? = nil, query: [RouteField] = [], body: RouteBody = .none,
                 responses: [(status: String, response: String)],
                 decode: @escaping @Sendable (RouteRequest) throws(ControlError) -> RouteTarget) {
        self.action = action
        self.method = method
        self.path = path
        self.name = name
        self.operationID = operationID
        self.summary = summary
        self.description = description
        self.query = query
        self.body = body
        self.responses = responses
        self.decode = decode
    }

    /// The path's segments after the leading slash (`{device}` stays as it is).
    package var segments: [String] { path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init) }

    /// The path's parameters (`device` of `{device}`), in order.
    package var parameterNames: [String] {
        segments.compactMap { $0.hasPrefix("{") && $0.hasSuffix("}") ? String($0.dropFirst().dropLast()) : nil }
    }

    /// A device action: `POST /v1/devices/{device}/<name>`, what MQTT's `command` and the CLI name.
    package var isDeviceAction: Bool { method == .POST && path == "/v1/devices/{device}/\(name)" }

    /// The parameters a request's (percent-decoded) segments give this route's path, or nil when
    /// they do not match it. A parameter matches any segment but an empty one.
    package func match(_ requested: [String]) -> [String: String]? {
        let own = segments
        guard own.count == requested.count else { return nil }
        var parameters: [String: String] = [:]
        for (mine, theirs) in zip(own, requested) {
            if mine.hasPrefix("{"), mine.hasSuffix("}") {
                guard !theirs.isEmpty else { return nil }
                parameters[String(mine.dropFirst().dropLast())] = theirs
            } else if mine != theirs {
                return nil
            }
        }
        return parameters
    }
}

/// What a route resolves to: a control command, the event stream, or the metrics.
package enum RouteTarget: Sendable, Equatable {
    case command(ControlCommand)
    case events(Set<HubEvents.Kind>?)
    case metrics
}

/// A body or query field: its name, its JSON Schema (the OpenAPI keywords in YAML's flow style,
/// `type: boolean`), whether it is required, and what it means. A request's keys are checked
/// against a route's fields (an unknown key is refused, naming the key meant).
package struct RouteField: Sendable {
    package let name: String
    package let schema: String
    package let required: Bool
    /// `null` is a value here (elsewhere it is refused: leave the key out instead).
    package let nullable: Bool
    package let description: String?
    /// An object's own fields (`home_assistant`'s `view_path`, `url_path`).
    package let fields: [RouteField]

    package init(_ name: String, _ schema: String, required: Bool = false, nullable: Bool = false, _ description: String? = nil,
                 fields: [RouteField] = []) {
        self.name = name
        self.schema = schema
        self.required = required
        self.nullable = nullable
        self.description = description
        self.fields = fields
    }

    package static func boolean(_ name: String, _ description: String? = nil) -> RouteField { RouteField(name, "type: boolean", description) }
}

/// A route's request body.
package enum RouteBody: Sendable {
    /// No body is read.
    case none
    /// A JSON object with these fields. `schema`: its name under `components/schemas` (nil: written
    /// inline). `variants`: the shapes it takes (`oneOf`), each a list of fields; `fields` is then
    /// every key any variant takes. `oneOfRequired`: alternatives of required keys.
    case object(RouteObject)
    /// A document whose schema the template holds (`Job`, `Empty`), read as the route decodes it.
    case document(schema: String, required: Bool)

    /// The keys a request body may have.
    package var fieldNames: [String] {
        guard case .object(let object) = self else { return [] }
        return object.fields.map(\.name)
    }

    package var fields: [RouteField] {
        guard case .object(let object) = self else { return [] }
        return object.fields
    }
}

/// A JSON object body: its fields and how the document shows it.
package struct RouteObject: Sendable {
    package let fields: [RouteField]
    package let required: Bool
    package let schema: String?
    package let description: String?
    package let variants: [[RouteField]]
    package let oneOfRequired: [[String]]

    package init(_ fields: [RouteField], required: Bool, schema: String? = nil, description: String? = nil,
                 oneOfRequired: [[String]] = []) {
        self.fields = fields
        self.required = required
        self.schema = schema
        self.description = description
        self.variants = []
        self.oneOfRequired = oneOfRequired
    }

    /// A body that takes one of `variants`; its keys are the union of theirs, in order.
    package init(variants: [[RouteField]], required: Bool) {
        var union: [RouteField] = []
        for field in variants.joined() where !union.contains(where: { $0.name == field.name }) { union.append(field) }
        self.fields = union
        self.required = required
        self.schema = nil
        self.description = nil
        self.variants = variants
        self.oneOfRequired = []
    }
}

/// A request as a route sees it: the path's parameters, the query, and the body, parsed on demand.
package struct RouteRequest: Sendable {
    package let route: ControlRoute
    package let parameters: [String: String]
    package let query: [String: String]
    package let body: [UInt8]

    package init(route: ControlRoute, parameters: [String: String], query: [String: String] = [:], body: [UInt8] = []) {
        self.route = route
        self.parameters = parameters
        self.query = query
        self.body = body
    }

    /// A path parameter (the route's pattern guarantees it is there and not empty).
    package subscript(_ name: String) -> String { parameters[name] ?? "" }

    /// The body as JSON; no body at all is an empty object (a literal `null` is not).
    package func json() throws(ControlError) -> JSONValue {
        guard !body.isEmpty else { return .object(JSONObject()) }
        let value: JSONValue
        do { value = try JSONValue.parse(String(decoding: body, as: UTF8.self)) } catch {
            throw ControlError.usage("bad_json", "the request body is not JSON: \(error)")
        }
        guard case .object = value else { throw ControlError.usage("body_not_object", "the request body must be a JSON object") }
        return value
    }

    /// The body's keys checked against the route's fields; `what` names the body in errors.
    package func arguments(what: String? = nil) throws(ControlError) -> ArgumentObject {
        try ArgumentObject(try json(), route: route, what: what)
    }
}

extension ArgumentObject {
    /// `json`'s keys checked against `route`'s body fields (and which of them may be null).
    package init(_ json: JSONValue, route: ControlRoute, what: String? = nil) throws(ControlError) {
        try self.init(json, allowed: route.body.fieldNames, nullable: Set(route.body.fields.filter(\.nullable).map(\.name)),
                      what: what ?? route.name)
    }

    /// `json`'s keys checked against `action`'s one route's body fields.
    package init(_ json: JSONValue, action: ControlAction, what: String? = nil) throws(ControlError) {
        try self.init(json, route: action.route, what: what)
    }
}
