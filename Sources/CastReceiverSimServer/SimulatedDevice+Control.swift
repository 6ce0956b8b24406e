import CastCore
import CastProtocol
import CastReceiverSim
import NIOCore

extension SimulatedDevice {
    /// `list` entry: identity, sockets, faults, connections and the state machine's snapshot. On the loop.
    func listing() -> JSONValue {
        let c = configuration
        let connections: [JSONValue] = connectionHandlers.map { handler in
            ["connection": .int(Int64(handler.id.rawValue)), "peer": .string(handler.peerDescription)]
        }
        let (snapshot, sync) = readState { state, now in
            let snapshot = state.snapshot(now: now)
            var json = snapshot.json
            // The ground truth, on the wall clock (``SimulatorWallClock``), sampled now.
            if case .object(var object) = json {
                object.append(key: "playback", value: snapshot.playback.map { .object(SimulatorWallClock.json($0)) } ?? .null)
                json = .object(object)
            }
            return (json, state.playbackSync)
        }
        let syncJSON: JSONValue = [
            "latency": latency.millisecondsJSON, "first_frame": sync.firstFrame.millisecondsJSON,
            "clock_drift_ppm": .double(sync.clockDriftPPM),
            "playback_rates": ["min": .double(sync.playbackRates.lowerBound), "max": .double(sync.playbackRates.upperBound)],
        ]
        return [
            "index": .int(Int64(index)), "name": .string(c.name), "uuid": .string(c.uuid), "model": .string(c.model),
            "address": .string(c.address), "castPort": .int(Int64(c.castPort)), "httpPort": .int(Int64(c.httpPort)),
            "httpsPort": .int(Int64(c.httpsPort)), "tls": .string(c.effectiveTLSProfile().rawValue), "down": .bool(isDown), "faults": faults.json,
            "connections": .array(connections), "state": snapshot, "mediaFetches": .array(mediaFetches), "sync": syncJSON,
        ]
    }

    /// Closes every connection now, or after `after` seconds (and every later connection that long after it opens).
    func drop(after: Double?) {
        faults.dropAfter = after
        for handler in connectionHandlers {
            if let after { handler.scheduleDrop(after: after) } else { _ = handler.close(reason: "fault: drop") }
        }
    }

    /// A hostile device: every connected sender gets RECEIVER_STATUS broadcasts at `rate` a second
    /// for `seconds`, in bursts every 10 ms. Returns how many senders it floods.
    func flood(rate: Int, seconds: Double) -> Int {
        let handlers = connectionHandlers
        let payload = readState { state, _ in state.unsolicitedReceiverStatus }
        // Every broadcast differs from the one before (the volume steps through ten levels), so
        // each one is a change a sender would pass on.
        let messages = (0..<10).map { step -> CastMessage in
            var json = payload
            if case .object(var root) = json, case .object(var status)? = root["status"] {
                var volume = JSONObject()
                if case .object(let current)? = status["volume"] { volume = current }
                volume.set("level", .double(Double(step) / 10))
                status.set("volume", .object(volume))
                root.set("status", .object(status))
                json = .object(root)
            }
            return CastMessage(source: "receiver-0", destination: "*", namespace: .receiver, json: json)
        }
        let perTick = max(1, rate / 100)
        let ticks = max(1, Int(seconds * 100))
        log.warning("fault: flooding \(handlers.count) sender(s) with \(rate) RECEIVER_STATUS a second for \(seconds.formatted) s",
                    ["rate": .int(rate), "seconds": .double(seconds)])
        frameLogEvent("fault", connection: nil, peer: nil, fields: ["kind": "flood", "rate": .int(Int64(rate))])
        @Sendable func tick(_ left: Int) {
            guard left > 0 else { return }
            for handler in handlers { for i in 0..<perTick { handler.send(messages[i % messages.count]) } }
            loop.scheduleTask(in: .milliseconds(10)) { tick(left - 1) }
        }
        tick(ticks)
        return handlers.count
    }

    /// Sends one bad frame of `kind` to every connected sender; returns how many got it.
    func sendMalformed(_ kind: MalformedFrame) -> Int {
        let handlers = connectionHandlers
        for handler in handlers {
            switch kind {
            case .garbage:
                let body: [UInt8] = [0xFF, 0xFE, 0x00, 0x13, 0x37, 0xDE, 0xAD, 0xBE, 0xEF]
                handler.sendRaw([0, 0, 0, UInt8(body.count)] + body)
            case .oversized:
                handler.sendRaw([0x00, 0x01, 0x00, 0x01])   // 65,537: one past the limit
            case .zeroLength:
                handler.sendRaw([0, 0, 0, 0])
            case .invalidJSON:
                handler.send(CastMessage(sourceID: "receiver-0", destinationID: "*", namespace: .receiver,
                                         payload: .string("{\"type\": \"RECEIVER_STATUS\", ")))
            case .unknownNamespace:
                handler.send(CastMessage(source: "receiver-0", destination: "*",
                                         namespace: "urn:x-cast:com.castline.sim.unknown", json: ["type": "SURPRISE"]))
            }
        }
        log.warning("fault: sent a \(kind.rawValue) frame to \(handlers.count) sender(s)", ["kind": .string(kind.rawValue)])
        frameLogEvent("fault", connection: nil, peer: nil, fields: ["kind": .string(kind.rawValue)])
        return handlers.count
    }

    /// A frame or TLS problem on one connection: logged and put in the frame log.
    func recordFrameError(_ description: String, connection: ReceiverConnectionHandler) {
        log.warning("bad input from \(connection.peerDescription): \(description)", [
            "connection": .int(Int(connection.id.rawValue)), "peer": .string(connection.peerDescription),
        ])
        frameLogEvent("frameError", connection: connection.id.rawValue, peer: connection.peerDescription,
                      fields: ["error": .string(description)])
    }
}
