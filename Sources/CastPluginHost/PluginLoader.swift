internal import CCastPluginABI
#if canImport(Glibc)
import Glibc
#endif

/// Opens one plugin file and checks it: safety of the file, `dlopen`, the entry symbol, the ABI
/// version and every struct's size. Never unloads anything (`RTLD_NODELETE`, no `dlclose`):
/// Swift images cannot be unloaded safely.
public enum PluginLoader {
    /// Loads and checks `path`. Nothing of the plugin runs except its describe function.
    public static func load(_ path: String, checkSafety: Bool = true) -> Result<LoadedPlugin, PluginLoadError> {
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
        // abi_major, abi_minor and struct_size come first in every version: safe to read before the size check.
        let major = raw.pointee.abi_major
        let minor = raw.pointee.abi_minor
        let size = raw.pointee.struct_size
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
        let descriptor: castline_plugin_descriptor = copyPrefix(raw, size: Int(size))
        guard let id = string(descriptor.id), isValidID(id) else {
            return .failure(PluginLoadError(.badDescriptor, path: path,
                "has a missing or invalid id (\(string(descriptor.id) ?? "NULL")); ids use a-z, 0-9, '.', '_' and '-'"))
        }
        let featureStride = Int(descriptor.feature_struct_size)
        if descriptor.feature_count > 0 {
            guard descriptor.features != nil else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id, "declares \(descriptor.feature_count) features but the array is NULL"))
            }
            guard featureStride >= Int(CASTLINE_FEATURE_SIZE_1_0) else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id,
                    "feature_struct_size \(featureStride) is smaller than the \(CASTLINE_FEATURE_SIZE_1_0) bytes of ABI 1.0"))
            }
            guard descriptor.feature_count <= 256 else {
                return .failure(PluginLoadError(.badDescriptor, path: path, pluginID: id, "declares \(descriptor.feature_count) features (at most 256)"))
            }
        }
        var features: [PluginFeature] = []
        var refused: [PluginLoadError] = []
        let base = UnsafeRawPointer(descriptor.features)
        for index in 0..<Int(descriptor.feature_count) {
            let featurePointer = base!.advanced(by: index * featureStride).assumingMemoryBound(to: castline_feature.self)
            let feature: castline_feature = copyPrefix(featurePointer, size: featureStride)
            switch checkFeature(feature, index: index, pluginID: id, pluginMinor: minor) {
            case .success(let f): features.append(f)
            case .failure(let problem): refused.append(PluginLoadError(.badDescriptor, path: path, pluginID: id, problem.text))
            }
        }
        return .success(LoadedPlugin(
            path: path, id: id, version: string(descriptor.version) ?? "", summary: string(descriptor.description) ?? "",
            license: string(descriptor.license) ?? "", abiMinor: minor, features: features, refusedFeatures: refused,
            entry: PluginEntryPoints(initialize: descriptor.`init`, deinitialize: descriptor.deinit)))
    }

    private static func checkFeature(_ f: castline_feature, index: Int, pluginID: String, pluginMinor: UInt32) -> Result<PluginFeature, FeatureProblem> {
        guard let id = string(f.id), isValidID(id) else {
            return .failure(FeatureProblem("feature #\(index) has a missing or invalid id (\(string(f.id) ?? "NULL"))"))
        }
        guard let kind = PluginFeatureKind(rawValue: f.kind) else {
            return .failure(FeatureProblem("feature \(id) has unknown kind \(f.kind); this castline knows 1-\(PluginFeatureKind.allCases.count)"))
        }
        guard pluginMinor >= PluginABI.minimumMinor(of: kind) else {
            return .failure(FeatureProblem("feature \(id) is a \(kind), which needs plugin ABI 1.\(PluginABI.minimumMinor(of: kind)); the plugin declares 1.\(pluginMinor)"))
        }
        guard let table = f.vtable else { return .failure(FeatureProblem("feature \(id) (\(kind)) has no vtable")) }
        let userdata = PluginUserData(pointer: f.feature_userdata)
        /// The vtable of `type`, at least `minimum` (its frozen 1.0 size) long.
        func vtable<T>(_ type: T.Type, minimum: UInt32) -> Result<T, FeatureProblem> {
            // Every vtable starts with (uint32 version, uint32 struct_size).
            let header = table.assumingMemoryBound(to: UInt32.self)
            let version = header[0], size = Int(header[1])
            guard version <= PluginABI.minor else {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has vtable version \(version), newer than ABI minor \(PluginABI.minor)"))
            }
            guard size >= Int(minimum) else {
                return .failure(FeatureProblem("feature \(id) (\(kind)) has vtable struct_size \(size), smaller than the \(minimum) bytes of its first ABI"))
            }
            return .success(copyPrefix(table.assumingMemoryBound(to: T.self), size: size))
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
            return vtable(castline_log_sink_vtable.self, minimum: CASTLINE_LOG_SINK_VTABLE_SIZE_1_0).flatMap { v in
                guard v.open != nil, v.write != nil, v.close != nil else {
                    return .failure(FeatureProblem("feature \(id) (log_sink) lacks open, write or close"))
                }
                return .success(make([], .logSink(v)))
            }
        case .bridge:
            return vtable(castline_bridge_vtable.self, minimum: CASTLINE_BRIDGE_VTABLE_SIZE_1_1).flatMap { v in
                guard v.start != nil, v.on_reply != nil, v.stop != nil else {
                    return .failure(FeatureProblem("feature \(id) (bridge) lacks start, on_reply or stop"))
                }
                return .success(make([], .bridge(v)))
            }
        }
    }

    /// Copies the first `size` bytes of a plugin struct into a zeroed host-sized one.
    static func copyPrefix<T>(_ pointer: UnsafePointer<T>, size: Int) -> T {
        let result = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        defer { result.deallocate() }
        result.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.size)
        result.copyMemory(from: pointer, byteCount: min(size, MemoryLayout<T>.size))
        return result.load(as: T.self)
    }

    static func string(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }

    /// A NULL-terminated list of strings (at most 64 read).
    static func stringList(_ list: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        var i = 0
        while i < 64, let item = list[i] {
            result.append(String(cString: item))
            i += 1
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
    init(_ text: String) { self.text = text }
}
