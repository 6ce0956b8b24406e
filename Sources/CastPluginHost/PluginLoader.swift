internal import CCastPluginABI
#if canImport(Glibc)
import Glibc
#endif

/// Opens one plugin file and checks it: safety of the file, `dlopen`, the entry symbol, the ABI
/// version and every struct's size. Never unloads anything (`RTLD_NODELETE`, no `dlclose`):
/// Swift images cannot be unloaded safely.
package enum PluginLoader {
    /// Loads and checks `path`. Nothing of the plugin runs except its describe function.
    package static func load(_ path: String, checkSafety: Bool = true) -> Result<LoadedPlugin, PluginLoadError> {
        if checkSafety, let problem = PluginFileSafety.problem(with: path) {
            return .failure(PluginLoadError(.unsafeFile, path: path, "refused: " + problem))
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            return .failure(PluginLoadError(.openFailed, path: path, "cannot be opened: \(reason)"))
        }
        _ = dlerror()
        guard let symbol = dlsym(handle, PluginABI.entrySymbol) else {
            for major in 0...9 where UInt32(major) != PluginABI.major {
                if dlsym(handle, PluginABI.entrySymbol(major: major)) != nil {
                    return .failure(PluginLoadError(.abiMajor, path: path,
                        "was built for plugin ABI \(major) (exports \(PluginABI.entrySymbol(major: major))); this castline speaks ABI \(PluginABI.major): rebuild the plugin against castline_plugin.h \(PluginABI.major).\(PluginABI.minor)"))
                }
            }
            return .failure(PluginLoadError(.missingEntry, path: path,
                "is not a castline plugin: it does not export \(PluginABI.entrySymbol)"))
        }
        let describe = unsafeBitCast(symbol, to: (@convention(c) () -> UnsafePointer<castline_plugin_descriptor>?).self)
        guard let raw = describe() else {
            return .failure(PluginLoadError(.badDescriptor, path: path, "\(PluginABI.entrySymbol) returned NULL"))
        }
        return check(raw, path: path)
    }

    static func check(_ raw: UnsafePointer<castline_plugin_descriptor>, path: String) -> Result<LoadedPlugin, PluginLoadError> {
        // abi_major, abi_minor and struct_size come first in every version: read them (safely)
        // before anything else.
        guard let header = PluginMemory.bytes(UnsafeRawPointer(raw), count: 12) else {
            return .failure(PluginLoadError(.badDescriptor, path: path, "\(PluginABI.entrySymbol) returned a pointer to unreadable memory"))
        }
        let words = header.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
        let (major, minor, size) = (words[0], words[1], words[2])
        guard major == PluginABI.major else {
            return .failure(PluginLoadError(.abiMajor, path: path,
                "declares plugin ABI \(major).\(minor) but this castline speaks \(PluginABI.major).\(PluginABI.minor): rebuild the plugin"))
        }
        guard minor <= PluginABI.minor else {
            return .failure(PluginLoadError(.abiMinor, path: path,
                "needs plugin ABI \(major).\(minor), newer than this castline's \(PluginABI.major).\(PluginABI.minor): update castline or use an older build of the plugin"))
        }
        let minimum = Int(CASTLINE_PLUGIN_DESCRIPTOR_SIZE_1_0)
        guard Int(size) >= minimum else {
            return .failure(PluginLoadError(.badDescriptor, path: path,
                "descriptor struct_size \(size) is smaller than the \(minimum) bytes of ABI 1.0"))
        }
        guard Int(size) <= PluginMemory.Limit.structSize else {
            return .failure(PluginLoadError(.badDescriptor, path: path,
                "descriptor struct_size \(size) is over the \(PluginMemory.Limit.structSize) bytes a descriptor may have: a corrupt descriptor"))
        }
        guard let descriptor = PluginMemory.structPrefix(UnsafeRawPointer(raw), size: Int(size), as: castline_plugin_descriptor.self) else {
            return .failure(PluginLoadError(.badDescriptor, path: path, "its descriptor (struct_size \(size)) is not readable memory"))
        }
        let id: String
        switch PluginMemory.string(descriptor.id, limit: PluginMemory.Limit.identifier) {
        case .success(let text) where isValidID(text): id = text
        case .success(let text):
            return .failure(PluginLoadError(.badDescriptor, path: path,
                "has an invalid id (\"\(PluginMemory.printable(text.utf8))\"); ids use a-z, 0-9, '.', '_' and '-', at most \(PluginMemory.Limit.identifier) bytes"))
        case .failure(let problem):
            return .failure(PluginLoadError(.badDescriptor, path: path, "has a missing or invalid id (\(problem))"))
        }
        let featureStride = Int(descriptor.feature_struct_size)
        var featureBytes: [UInt8] = []
        // size_t arrives as Int: a count with the top bit set reads as negative.
        guard (0...PluginMemory.Limit.features).contains(descriptor.feature_count) || descriptor.feature_count > PluginMemory.Limit.features else {
            return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id,
                "declares \(UInt(bitPattern: descriptor.feature_count)) features (at most \(PluginMemory.Limit.features))"))
        }
        if descriptor.feature_count != 0 {
            guard descriptor.features != nil else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id, "declares \(descriptor.feature_count) features but the array is NULL"))
            }
            guard featureStride >= Int(CASTLINE_FEATURE_SIZE_1_0) else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id,
                    "feature_struct_size \(featureStride) is smaller than the \(CASTLINE_FEATURE_SIZE_1_0) bytes of ABI 1.0"))
            }
            guard featureStride <= PluginMemory.Limit.structSize else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id,
                    "feature_struct_size \(featureStride) is over the \(PluginMemory.Limit.structSize) bytes a feature may have: a corrupt descriptor"))
            }
            guard descriptor.feature_count <= PluginMemory.Limit.features else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id, "declares \(descriptor.feature_count) features (at most \(PluginMemory.Limit.features))"))
            }
            guard let bytes = PluginMemory.bytes(UnsafeRawPointer(descriptor.features), count: Int(descriptor.feature_count) * featureStride) else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id,
                    "declares \(descriptor.feature_count) features, but the array does not hold that many readable entries: feature_count exceeds the array"))
            }
            featureBytes = bytes
        }
        var features: [PluginFeature] = []
        var refused: [PluginLoadError] = []
        for index in 0..<Int(descriptor.feature_count) {
            let feature: castline_feature = featureBytes.withUnsafeBytes { all in
                PluginMemory.structPrefix(all.baseAddress! + index * featureStride, size: featureStride, as: castline_feature.self)!
            }
            switch checkFeature(feature, index: index, pluginID: id, pluginMinor: minor) {
            case .success(let f): features.append(f)
            case .failure(let problem) where problem.corrupt:
                // Not a feature at all (no readable id, an unknown kind): the count exceeds the
                // array, or the descriptor is corrupt. Nothing of such a plugin is used.
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id,
                    "declares \(descriptor.feature_count) features, but \(problem.text): feature_count exceeds the array, or the descriptor is corrupt"))
            case .failure(let problem): refused.append(PluginLoadError(.badDescriptor, path: path, pluginID: id, problem.text))
            }
        }
        let text = { (p: UnsafePointer<CChar>?) in PluginMemory.optionalString(p, limit: PluginMemory.Limit.text) ?? "" }
        let entry = PluginEntryPoints(initialize: PluginMemory.isCode(unsafeBitCast(descriptor.`init`, to: UnsafeRawPointer?.self)) ? descriptor.`init` : nil,
                                      deinitialize: PluginMemory.isCode(unsafeBitCast(descriptor.deinit, to: UnsafeRawPointer?.self)) ? descriptor.deinit : nil)
        if (descriptor.`init` != nil && entry.initialize == nil) || (descriptor.deinit != nil && entry.deinitialize == nil) {
            return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id, "its init or deinit points outside the code of any loaded image"))
        }
        return .success(LoadedPlugin(
            path: path, id: id, version: text(descriptor.version), summary: text(descriptor.description),
            license: text(descriptor.license), abiMinor: minor, features: features, refusedFeatures: refused, entry: entry))
    }

    private static func checkFeature(_ f: castline_feature, index: Int, pluginID: String, pluginMinor: UInt32) -> Result<PluginFeature, FeatureProblem> {
        let id: String
        switch PluginMemory.string(f.id, limit: PluginMemory.Limit.identifier) {
        case .success(let text) where isValidID(text): id = text
        case .success(let text): return .failure(FeatureProblem("feature #\(index) has an invalid id (\"\(PluginMemory.printable(text.utf8))\")", corrupt: true))
        case .failure(let problem): return .failure(FeatureProblem("feature #\(index) has no readable id (\(problem))", corrupt: true))
        }
        guard let kind = PluginFeatureKind(rawValue: f.kind) else {
            return .failure(FeatureProblem("feature #\(index) (\(id)) has unknown kind \(f.kind); this castline knows 1-\(PluginFeatureKind.allCases.count)", corrupt: true))
        }
        guard pluginMinor >= PluginABI.minimumMinor(of: kind) else {
            return .failure(FeatureProblem("feature \(id) is a \(kind), which needs plugin ABI 1.\(PluginABI.minimumMinor(of: kind)); the plugin declares 1.\(pluginMinor)"))
        }
        guard let table = f.vtable else { return .failure(FeatureProblem("feature \(id) (\(kind)) has no vtable")) }
        let userdata = PluginUserData(pointer: f.feature_userdata)
        /// The vtable of `type`, at least `minimum` (its frozen 1.0 size) long, its functions in code.
        func vtable<T>(_ type: T.Type, minimum: UInt32, functionsFrom first: Int = 16) -> Result<T, FeatureProblem> {
            // Every vtable starts with (uint32 version, uint32 struct_size).
            guard let header = PluginMemory.bytes(table, count: 8) else {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has a vtable pointer to unreadable memory", corrupt: true))
            }
            let version = header.withUnsafeBytes { $0.load(as: UInt32.self) }
            let size = Int(header.withUnsafeBytes { $0.load(fromByteOffset: 4, as: UInt32.self) })
            guard version <= PluginABI.minor else {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has vtable version \(version), newer than ABI minor \(PluginABI.minor)"))
            }
            guard size >= Int(minimum) else {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has vtable struct_size \(size), smaller than the \(minimum) bytes of its first ABI"))
            }
            guard size <= PluginMemory.Limit.structSize else {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has vtable struct_size \(size), over the \(PluginMemory.Limit.structSize) bytes a vtable may have", corrupt: true))
            }
            guard let copied = PluginMemory.structPrefix(table, size: size, as: T.self) else {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has a vtable (struct_size \(size)) in unreadable memory", corrupt: true))
            }
            // Every function pointer the host may call (each field from `first` on: after the
            // header and, where there is one, the string list) must point into code.
            let functions = withUnsafeBytes(of: copied) { raw in
                stride(from: first, to: MemoryLayout<T>.size, by: 8).map { raw.load(fromByteOffset: $0, as: UInt.self) }
            }
            if functions.contains(where: { $0 != 0 && !PluginMemory.isCode(UnsafeRawPointer(bitPattern: $0)) }) {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has a vtable function pointer outside the code of any loaded image", corrupt: true))
            }
            return .success(copied)
        }
        func make(_ declarations: [String], _ v: PluginVTable) -> PluginFeature {
            PluginFeature(pluginID: pluginID, kind: kind, id: id, rank: f.rank, declarations: declarations, vtable: v, userdata: userdata)
        }
        switch kind {
        case .discovery:
            return vtable(castline_discovery_vtable.self, minimum: CASTLINE_DISCOVERY_VTABLE_SIZE_1_0).flatMap { v in
                guard v.start != nil, v.stop != nil else { return .failure(FeatureProblem("feature \(id) (discovery) lacks start or stop")) }
                let types = stringList(v.service_types)
                guard !types.isEmpty else {
                    return .failure(FeatureProblem("feature \(id) (discovery) declares no DNS-SD service types (service_types); a discovery feature must say what it browses"))
                }
                return .success(make(types, .discovery(v)))
            }
        case .channel:
            return vtable(castline_channel_vtable.self, minimum: CASTLINE_CHANNEL_VTABLE_SIZE_1_0).flatMap { v in
                guard v.open != nil, v.on_message != nil, v.close != nil else {
                    return .failure(FeatureProblem("feature \(id) (channel) lacks open, on_message or close"))
                }
                let namespaces = stringList(v.namespaces)
                guard !namespaces.isEmpty else { return .failure(FeatureProblem("feature \(id) (channel) declares no namespaces")) }
                if let bad = namespaces.first(where: { !$0.hasPrefix("urn:x-cast:") || $0.utf8.count > 128 }) {
                    return .failure(FeatureProblem("feature \(id) (channel) declares namespace \"\(bad)\"; custom namespaces start with urn:x-cast: and are at most 128 bytes"))
                }
                return .success(make(namespaces, .channel(v)))
            }
        case .mediaFormat:
            return vtable(castline_media_format_vtable.self, minimum: CASTLINE_MEDIA_FORMAT_VTABLE_SIZE_1_0).flatMap { v in
                guard v.probe != nil else { return .failure(FeatureProblem("feature \(id) (media_format) lacks probe")) }
                return .success(make(stringList(v.content_types), .mediaFormat(v)))
            }
        case .logSink:
            return vtable(castline_log_sink_vtable.self, minimum: CASTLINE_LOG_SINK_VTABLE_SIZE_1_0, functionsFrom: 8).flatMap { v in
                guard v.open != nil, v.write != nil, v.close != nil else {
                    return .failure(FeatureProblem("feature \(id) (log_sink) lacks open, write or close"))
                }
                return .success(make([], .logSink(v)))
            }
        case .bridge:
            return vtable(castline_bridge_vtable.self, minimum: CASTLINE_BRIDGE_VTABLE_SIZE_1_1, functionsFrom: 8).flatMap { v in
                guard v.start != nil, v.on_reply != nil, v.stop != nil else {
                    return .failure(FeatureProblem("feature \(id) (bridge) lacks start, on_reply or stop"))
                }
                return .success(make([], .bridge(v)))
            }
        }
    }

    /// A NULL-terminated list of strings (at most 64 read, each at most 256 bytes); reading
    /// stops at the first entry that is not readable.
    static func stringList(_ list: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        for i in 0..<64 {
            guard let slot = PluginMemory.bytes(UnsafeRawPointer(list + i), count: MemoryLayout<UInt>.size) else { break }
            let address = slot.withUnsafeBytes { $0.load(as: UInt.self) }
            guard address != 0, let item = PluginMemory.optionalString(UnsafePointer(bitPattern: address), limit: PluginMemory.Limit.name) else { break }
            result.append(item)
        }
        return result
    }

    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2E || c == 0x5F || c == 0x2D
        }
    }
}

struct FeatureProblem: Error {
    let text: String
    /// Not a feature at all: the whole plugin is refused.
    let corrupt: Bool
    init(_ text: String, corrupt: Bool = false) {
        self.text = text
        self.corrupt = corrupt
    }
}
