import CastCore

extension YAMLNode {
    /// The node as JSON, resolving plain scalars with the YAML 1.2 core schema (null, true/false,
    /// integers, floats; everything else and every quoted scalar is a string). Used for the
    /// free-form parts of a config (plugin configs, sink options) handed to plugins as JSON.
    package var jsonValue: JSONValue {
        switch content {
        case .scalar(let text, let plain):
            guard plain, tag == nil else { return .string(text) }
            if isNull { return .null }
            switch text {
            case "true", "True", "TRUE": return .bool(true)
            case "false", "False", "FALSE": return .bool(false)
            default: break
            }
            if let int = Int64(text) { return .int(int) }
            if text.first.map({ $0.isNumber || $0 == "-" || $0 == "+" || $0 == "." }) == true,
               let double = Double(text), double.isFinite {
                return .double(double)
            }
            return .string(text)
        case .sequence(let items):
            return .array(items.map(\.jsonValue))
        case .mapping(let pairs):
            var object = JSONObject()
            for pair in pairs {
                guard case .scalar(let key, _) = pair.key.content else { continue }
                object.set(key, pair.value.jsonValue)
            }
            return .object(object)
        }
    }
}
