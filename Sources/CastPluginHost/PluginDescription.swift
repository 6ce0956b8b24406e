import CastCore

/// A plugin's description as JSON, for the scanner's report (``PluginScanChild``) and back: what
/// `describe` returned, without anything that only means something in the process that loaded it
/// (vtables, userdata, entry points).
extension LoadedPlugin {
    var descriptionJSON: JSONValue {
        ["id": .string(id), "version": .string(version), "summary": .string(summary), "license": .string(license),
         "abiMinor": .int(Int64(abiMinor)),
         "features": .array(features.map { f in
             ["kind": .int(Int64(f.kind.rawValue)), "id": .string(f.id), "rank": .int(Int64(f.rank)),
              "declarations": .array(f.declarations.map { .string($0) })]
         }),
         "refused": .array(refusedFeatures.map(\.json))]
    }

    /// The plugin a description names, its features marked ``PluginVTable/described``; nil when
    /// the JSON is not a description.
    static func described(from json: JSONValue, path: String) -> LoadedPlugin? {
        guard let id = json["id"]?.string, PluginLoader.isValidID(id), case .array(let list)? = json["features"] else { return nil }
        var features: [PluginFeature] = []
        for item in list {
            guard let raw = item["kind"]?.int, let kind = PluginFeatureKind(rawValue: UInt32(clamping: raw)),
                  let featureID = item["id"]?.string else { return nil }
            let declarations = item["declarations"]?.array?.compactMap(\.string) ?? []
            features.append(PluginFeature(pluginID: id, kind: kind, id: featureID, rank: Int32(clamping: item["rank"]?.int ?? 0),
                                          declarations: declarations, vtable: .described, userdata: PluginUserData(pointer: nil)))
        }
        let refused = json["refused"]?.array?.compactMap { PluginLoadError(json: $0, path: path) } ?? []
        return LoadedPlugin(path: path, id: id, version: json["version"]?.string ?? "", summary: json["summary"]?.string ?? "",
                            license: json["license"]?.string ?? "", abiMinor: UInt32(clamping: json["abiMinor"]?.int ?? 0),
                            features: features, refusedFeatures: refused,
                            entry: PluginEntryPoints(initialize: nil, deinitialize: nil))
    }
}

extension PluginLoadError {
    var json: JSONValue {
        ["kind": .string(kind.rawValue), "pluginId": pluginID.map { .string($0) } ?? .null, "reason": .string(reason)]
    }

    init?(json: JSONValue, path: String) {
        guard let raw = json["kind"]?.string, let kind = Kind(rawValue: raw), let reason = json["reason"]?.string else { return nil }
        self.init(kind, path: path, pluginID: json["pluginId"]?.string, reason)
    }
}
