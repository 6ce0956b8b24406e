import CMosquitto
import MQTTBridgeCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One libmosquitto client on a thread of its own: connects, runs the network loop, and on any
/// loss waits (``ReconnectBackoff``, jitter) and connects again, for as long as it runs. The last
/// will (`offline`, retained) is registered before every connect; the password is read from its
/// file at each connect and handed to libmosquitto only. Publishing is thread-safe
/// (`mosquitto_threaded_set`).
final class MosquittoClient: @unchecked Sendable {
    struct Options: Sendable {
        var host: String
        var port: Int
        var clientID: String
        var keepalive: Int
        var username: String?
        var passwordFile: String?
        var tls: Bool
        var caFile: String?
        var willTopic: String
        var willPayload: String
        /// TCP_NODELAY on the broker connection (default on): each publish leaves at once. With
        /// Nagle's algorithm a small publish written while the previous one is unacknowledged
        /// waits for the broker's delayed ACK (~40 ms): a command's result took 85 ms instead of
        /// 3 (docs/performance.md, "MQTT"). Off only to measure that.
        var tcpNoDelay = true
    }

    /// What the owner hears, from the client's thread.
    struct Handlers: Sendable {
        /// A session is up (CONNACK accepted): subscribe, publish the retained state.
        var connected: @Sendable () -> Void
        var disconnected: @Sendable (_ reason: String) -> Void
        /// A message: its topic, its payload (empty when it is over `maximumPayload`: then
        /// `size` says how large it was), and whether the broker delivered it as retained.
        var message: @Sendable (_ topic: String, _ payload: [UInt8], _ size: Int, _ retained: Bool) -> Void
        /// A problem worth a log line (never carries the password).
        var problem: @Sendable (_ text: String) -> Void
    }

    private let options: Options
    private let handlers: Handlers
    private let mosq: OpaquePointer
    private let running = Atomic<Bool>(true)
    private let isConnected = Atomic<Bool>(false)
    private var thread = pthread_t()
    private static let libraryInit: Void = { mosquitto_lib_init() }()

    init?(options: Options, handlers: Handlers) {
        _ = Self.libraryInit
        self.options = options
        self.handlers = handlers
        // clean_session false: commands sent while the agent reconnects wait at the broker.
        guard let m = mosquitto_new(options.clientID, false, nil) else { return nil }
        mosq = m
        mosquitto_threaded_set(mosq, true)
        if options.tcpNoDelay { mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1) }
        mosquitto_user_data_set(mosq, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(mosq) { _, user, rc in
            let client = Unmanaged<MosquittoClient>.fromOpaque(user!).takeUnretainedValue()
            if rc == 0 {
                client.isConnected.store(true, ordering: .sequentiallyConsistent)
                client.handlers.connected()
            } else {
                client.handlers.problem("the broker refused the connection: \(String(cString: mosquitto_connack_string(rc)))")
            }
        }
        mosquitto_message_callback_set(mosq) { _, user, message in
            guard let user, let message else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(user).takeUnretainedValue()
            let m = message.pointee
            let topic = m.topic.map { String(cString: $0) } ?? ""
            // A payload over the limit is never copied: its size is what the refusal says.
            var bytes: [UInt8] = []
            if let payload = m.payload, m.payloadlen > 0, Int(m.payloadlen) <= CommandTranslator.maxPayload {
                bytes = Array(UnsafeRawBufferPointer(start: payload, count: Int(m.payloadlen)))
            }
            client.handlers.message(topic, bytes, Int(max(m.payloadlen, 0)), m.retain)
        }
    }

    deinit { mosquitto_destroy(mosq) }

    var connected: Bool { isConnected.load(ordering: .sequentiallyConsistent) }

    /// Starts the network thread.
    func start() -> Bool {
        let box = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let client = Unmanaged<MosquittoClient>.fromOpaque(raw!).takeRetainedValue()
            client.loop()
            return nil
        }, box)
        if rc != 0 { Unmanaged<MosquittoClient>.fromOpaque(box).release() }
        return rc == 0
    }

    /// Publishes `offline` (when connected), disconnects and ends the thread (bounded: the loop
    /// wakes every 100 ms).
    func stop(finalStatus: (topic: String, payload: String)?) {
        if let finalStatus, connected {
            _ = publish(finalStatus.topic, Array(finalStatus.payload.utf8), qos: 1, retain: true)
        }
        running.store(false, ordering: .sequentiallyConsistent)
        pthread_join(thread, nil)
    }

    /// Queues one message; false when libmosquitto refused it (not connected…).
    @discardableResult
    func publish(_ topic: String, _ payload: [UInt8], qos: Int32, retain: Bool) -> Bool {
        payload.withUnsafeBytes { b in
            mosquitto_publish(mosq, nil, topic, Int32(b.count), b.baseAddress, qos, retain) == MOSQ_ERR_SUCCESS.rawValue
        }
    }

    func subscribe(_ pattern: String, qos: Int32) -> Bool {
        mosquitto_subscribe(mosq, nil, pattern, qos) == MOSQ_ERR_SUCCESS.rawValue
    }

    private func loop() {
        var backoff = ReconnectBackoff()
        var first = true
        var socketOpen = false
        while running.load(ordering: .sequentiallyConsistent) {
            if !socketOpen {
                prepareConnect()
                let rc = first ? mosquitto_connect(mosq, options.host, Int32(options.port), Int32(options.keepalive)) : mosquitto_reconnect(mosq)
                if rc != MOSQ_ERR_SUCCESS.rawValue {
                    handlers.problem("cannot reach the broker \(options.host):\(options.port): \(Self.errorText(rc))")
                    pause(backoff.next(unit: Double.random(in: 0..<1)))
                    continue
                }
                first = false
                socketOpen = true
            }
            let rc = mosquitto_loop(mosq, 100, 1)
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                socketOpen = false
                let was = isConnected.exchange(false, ordering: .sequentiallyConsistent)
                if was { backoff.reset() }
                handlers.disconnected(Self.errorText(rc))
                pause(backoff.next(unit: Double.random(in: 0..<1)))
            }
        }
        mosquitto_disconnect(mosq)
        // Let the DISCONNECT (and a final publish) go out.
        for _ in 0..<5 where mosquitto_loop(mosq, 20, 1) == MOSQ_ERR_SUCCESS.rawValue {}
        isConnected.store(false, ordering: .sequentiallyConsistent)
    }

    /// The last will and the credentials, set again before each connect (the password file is
    /// read now, so a rotated password needs no restart).
    private func prepareConnect() {
        mosquitto_will_set(mosq, options.willTopic, Int32(options.willPayload.utf8.count), options.willPayload, 1, true)
        if let user = options.username {
            let password = options.passwordFile.flatMap(Self.firstLine)
            if options.passwordFile != nil, password == nil {
                handlers.problem("mqtt.password_file \(options.passwordFile!) cannot be read; connecting without a password")
            }
            mosquitto_username_pw_set(mosq, user, password)
        }
        if options.tls {
            let rc = mosquitto_tls_set(mosq, options.caFile, options.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
            if rc != MOSQ_ERR_SUCCESS.rawValue { handlers.problem("TLS setup failed: \(Self.errorText(rc))") }
        }
    }

    /// Sleeps `seconds` in 100 ms steps, returning early once stopped.
    private func pause(_ seconds: Double) {
        var left = seconds
        while left > 0, running.load(ordering: .sequentiallyConsistent) {
            let step = min(left, 0.1)
            usleep(useconds_t(step * 1_000_000))
            left -= step
        }
    }

    static func errorText(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    /// The first line of a small file (a password), nil when unreadable or empty.
    static func firstLine(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, 1023, file) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 && $0 != 10 && $0 != 13 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return line.isEmpty ? nil : line
    }
}
