#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Turns a ``CastlinePlugin`` type into the static C descriptor the entry symbol returns: the
/// Swift side of `CASTLINE_PLUGIN_DEFINE`. It fills in what the C macro does (ABI major and
/// minor, the descriptor's and the feature array's struct sizes, each vtable's version and size)
/// and builds the feature array from ``CastlinePlugin/features``. The plugin's one `@_cdecl` line
/// (``entrySymbol``) exports it: Swift has no preprocessor, and a Swift macro would need
/// swift-syntax, which castline does not depend on.
public enum PluginExport {
    /// The C name the `@_cdecl` line must give (`castline_plugin_v1_describe`); the host refuses a
    /// plugin without it and names the symbol it expected.
    public static let entrySymbol = CASTLINE_PLUGIN_ENTRY_SYMBOL
    private static let cached = Mutex<UnsafeRawPointer?>(nil)
    nonisolated(unsafe) private static var pluginInit: ((PluginHostServices, String) throws(PluginError) -> Void)?
    nonisolated(unsafe) private static var pluginDeinit: (() -> Void)?

    /// The descriptor for `plugin`, built on the first call and kept for the process lifetime.
    public static func describe<P: CastlinePlugin>(_ plugin: P.Type) -> UnsafeRawPointer? {
        cached.withLock { cached in
            if let cached { return cached }
            pluginInit = { host, config throws(PluginError) in try P.initialize(host: host, config: config) }
            pluginDeinit = { P.deinitialize() }
            let definitions = P.features
            let features = UnsafeMutablePointer<castline_feature>.allocate(capacity: max(definitions.count, 1))
            for (i, d) in definitions.enumerated() {
                let factory = Unmanaged.passRetained(d.factory).toOpaque()
                features[i] = castline_feature(kind: d.kind.rawValue, rank: d.rank, id: UnsafePointer(strdup(d.id)),
                                               vtable: vtable(for: d), feature_userdata: factory)
            }
            let descriptor = UnsafeMutablePointer<castline_plugin_descriptor>.allocate(capacity: 1)
            descriptor.initialize(to: castline_plugin_descriptor(
                abi_major: UInt32(CASTLINE_PLUGIN_ABI_MAJOR), abi_minor: UInt32(CASTLINE_PLUGIN_ABI_MINOR),
                struct_size: UInt32(MemoryLayout<castline_plugin_descriptor>.size),
                feature_struct_size: UInt32(MemoryLayout<castline_feature>.size),
                id: UnsafePointer(strdup(P.id)), version: UnsafePointer(strdup(P.version)),
                description: UnsafePointer(strdup(P.summary)), license: UnsafePointer(strdup(P.license)),
                init: { host, ctx, config, errorBuffer in
                    guard let host, let initialize = PluginExport.pluginInit else { return 0 }
                    do {
                        try initialize(PluginHostServices(table: host, ctx: ctx), config.map { String(cString: $0) } ?? "{}")
                        return 0
                    } catch {
                        let e = (error as? PluginError) ?? PluginError("\(error)"); write(e.reason, to: errorBuffer)
                        return e.status == 0 ? Int32(CASTLINE_ERR_FAILED.rawValue) : e.status
                    }
                },
                deinit: { PluginExport.pluginDeinit?() },
                features: UnsafePointer(features), feature_count: definitions.count))
            cached = UnsafeRawPointer(descriptor)
            return cached
        }
    }

    /// Builds the vtable of one feature (allocated once, never freed).
    private static func vtable(for d: PluginFeatureDefinition) -> UnsafeRawPointer {
        let declarations = cStringList(d.factory.declarations)
        switch d.kind {
        case CASTLINE_FEATURE_LOG_SINK:
            return allocate(castline_log_sink_vtable(
                version: UInt32(CASTLINE_PLUGIN_ABI_MINOR), struct_size: UInt32(MemoryLayout<castline_log_sink_vtable>.size),
                open: { userdata, host, ctx, options, out, errorBuffer in
                    let factory = Unmanaged<FeatureFactory>.fromOpaque(userdata!).takeUnretainedValue()
                    do {
                        let sink = try factory.makeSink!(PluginHostServices(table: host!, ctx: ctx), options.map { String(cString: $0) } ?? "{}")
                        out?.pointee = Unmanaged.passRetained(SinkBox(sink)).toOpaque()
                        return 0
                    } catch {
                        let e = (error as? PluginError) ?? PluginError("\(error)"); write(e.reason, to: errorBuffer)
                        return e.status
                    }
                },
                write: { state, records, count in
                    guard let records else { return }
                    Unmanaged<SinkBox>.fromOpaque(state!).takeUnretainedValue().sink.write(UnsafeBufferPointer(start: records, count: count))
                },
                flush: { state in Unmanaged<SinkBox>.fromOpaque(state!).takeUnretainedValue().sink.flush() },
                close: { state in
                    let box = Unmanaged<SinkBox>.fromOpaque(state!)
                    box.takeUnretainedValue().sink.close()
                    box.release()
                },
                dropped: { state in Unmanaged<SinkBox>.fromOpaque(state!).takeUnretainedValue().sink.dropped },
                problem: { state, out in
                    guard let text = Unmanaged<SinkBox>.fromOpaque(state!).takeUnretainedValue().sink.problem else { return 0 }
                    write(text, to: out)
                    return 1
                }))
        case CASTLINE_FEATURE_MEDIA_FORMAT:
            return allocate(castline_media_format_vtable(
                version: UInt32(CASTLINE_PLUGIN_ABI_MINOR), struct_size: UInt32(MemoryLayout<castline_media_format_vtable>.size),
                content_types: declarations,
                probe: { userdata, url, contentType, body, length, emit, emitContext, errorBuffer in
                    let factory = Unmanaged<FeatureFactory>.fromOpaque(userdata!).takeUnretainedValue()
                    do {
                        var json = try factory.probe!(url.map { String(cString: $0) }, contentType.map { String(cString: $0) },
                                                      body.map { UnsafeBufferPointer(start: $0, count: length) })
                        json.withUTF8 { b in b.withMemoryRebound(to: CChar.self) { emit?(emitContext, $0.baseAddress, $0.count) } }
                        return 0
                    } catch {
                        let e = (error as? PluginError) ?? PluginError("\(error)"); write(e.reason, to: errorBuffer)
                        return e.status
                    }
                }))
        case CASTLINE_FEATURE_CHANNEL:
            return allocate(castline_channel_vtable(
                version: UInt32(CASTLINE_PLUGIN_ABI_MINOR), struct_size: UInt32(MemoryLayout<castline_channel_vtable>.size),
                namespaces: declarations,
                open: { userdata, host, ctx, config, session, out, errorBuffer in
                    let factory = Unmanaged<FeatureFactory>.fromOpaque(userdata!).takeUnretainedValue()
                    do {
                        let channel = try factory.makeChannel!(PluginHostServices(table: host!, ctx: ctx),
                                                               config.map { String(cString: $0) } ?? "{}",
                                                               session.map { String(cString: $0) } ?? "{}")
                        out?.pointee = Unmanaged.passRetained(ChannelBox(channel)).toOpaque()
                        return 0
                    } catch {
                        let e = (error as? PluginError) ?? PluginError("\(error)"); write(e.reason, to: errorBuffer)
                        return e.status
                    }
                },
                on_message: { state, namespace, source, payload, length in
                    let channel = Unmanaged<ChannelBox>.fromOpaque(state!).takeUnretainedValue().channel
                    let text = payload.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
                    channel.didReceive(namespace: namespace.map { String(cString: $0) } ?? "",
                                       source: source.map { String(cString: $0) } ?? "", payload: text)
                },
                command: { state, id, json, length in
                    let channel = Unmanaged<ChannelBox>.fromOpaque(state!).takeUnretainedValue().channel
                    channel.command(id: id, json: json.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? "{}")
                },
                close: { state in
                    let box = Unmanaged<ChannelBox>.fromOpaque(state!)
                    box.takeUnretainedValue().channel.close()
                    box.release()
                },
                on_app_event: { state, event, info, length in
                    guard let event = ChannelAppEvent(rawValue: event) else { return }
                    let channel = Unmanaged<ChannelBox>.fromOpaque(state!).takeUnretainedValue().channel
                    channel.appDidChange(event, info: info.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? "{}")
                }))
        case CASTLINE_FEATURE_BRIDGE:
            return allocate(castline_bridge_vtable(
                version: UInt32(CASTLINE_PLUGIN_ABI_MINOR), struct_size: UInt32(MemoryLayout<castline_bridge_vtable>.size),
                start: { userdata, host, ctx, config, out, errorBuffer in
                    let factory = Unmanaged<FeatureFactory>.fromOpaque(userdata!).takeUnretainedValue()
                    do {
                        let bridge = try factory.makeBridge!(PluginHostServices(table: host!, ctx: ctx), config.map { String(cString: $0) } ?? "{}")
                        out?.pointee = Unmanaged.passRetained(BridgeBox(bridge)).toOpaque()
                        return 0
                    } catch {
                        let e = (error as? PluginError) ?? PluginError("\(error)"); write(e.reason, to: errorBuffer)
                        return e.status
                    }
                },
                on_reply: { state, id, status, json, length in
                    let bridge = Unmanaged<BridgeBox>.fromOpaque(state!).takeUnretainedValue().bridge
                    bridge.didReply(request: id, status: Int(status),
                                    json: json.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? "{}")
                },
                on_event: { state, json, length in
                    let bridge = Unmanaged<BridgeBox>.fromOpaque(state!).takeUnretainedValue().bridge
                    bridge.didReceive(event: json.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? "{}")
                },
                stop: { state in
                    let box = Unmanaged<BridgeBox>.fromOpaque(state!)
                    box.takeUnretainedValue().bridge.stop()
                    box.release()
                }))
        default:
            return allocate(castline_discovery_vtable(
                version: UInt32(CASTLINE_PLUGIN_ABI_MINOR), struct_size: UInt32(MemoryLayout<castline_discovery_vtable>.size),
                service_types: declarations,
                start: { userdata, host, ctx, config, apps, out, errorBuffer in
                    let factory = Unmanaged<FeatureFactory>.fromOpaque(userdata!).takeUnretainedValue()
                    do {
                        let discovery = try factory.makeDiscovery!(PluginHostServices(table: host!, ctx: ctx),
                                                                   config.map { String(cString: $0) } ?? "{}",
                                                                   apps.map { String(cString: $0) } ?? "[]")
                        out?.pointee = Unmanaged.passRetained(DiscoveryBox(discovery)).toOpaque()
                        return 0
                    } catch {
                        let e = (error as? PluginError) ?? PluginError("\(error)"); write(e.reason, to: errorBuffer)
                        return e.status
                    }
                },
                stop: { state in
                    let box = Unmanaged<DiscoveryBox>.fromOpaque(state!)
                    box.takeUnretainedValue().discovery.stop()
                    box.release()
                }))
        }
    }

    private static func allocate<T>(_ value: T) -> UnsafeRawPointer {
        let p = UnsafeMutablePointer<T>.allocate(capacity: 1)
        p.initialize(to: value)
        return UnsafeRawPointer(p)
    }

    private static func cStringList(_ strings: [String]) -> UnsafePointer<UnsafePointer<CChar>?> {
        let list = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: strings.count + 1)
        for (i, s) in strings.enumerated() { list[i] = UnsafePointer(strdup(s)) }
        list[strings.count] = nil
        return UnsafePointer(list)
    }
}

final class SinkBox {
    let sink: any LogSinkPlugin
    init(_ sink: any LogSinkPlugin) { self.sink = sink }
}

final class ChannelBox {
    let channel: any ChannelPlugin
    init(_ channel: any ChannelPlugin) { self.channel = channel }
}

final class BridgeBox {
    let bridge: any BridgePlugin
    init(_ bridge: any BridgePlugin) { self.bridge = bridge }
}

final class DiscoveryBox {
    let discovery: any DiscoveryPlugin
    init(_ discovery: any DiscoveryPlugin) { self.discovery = discovery }
}
