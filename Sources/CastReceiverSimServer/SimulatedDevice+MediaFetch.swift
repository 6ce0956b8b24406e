import CastCore
import CastLogging
import CastProtocol
import CastReceiverSim
import NIOCore

extension SimulatedDevice {
    /// How many fetch results a device keeps for the control socket's `list`.
    static let mediaFetchHistory = 20

    /// A LOAD waits for its media (``DeviceOutput/checkMedia(_:)``): fetch the first 64 KiB as a
    /// receiver does, judge the result as a receiver would (``MediaCheckVerdict``), and let the
    /// state machine answer the LOAD. Only loopback URLs get here: tests and demos never send
    /// traffic elsewhere. The result is logged, written to the frame log (`mediaChecked`) and
    /// listed under `mediaFetches` in `list`. Called on the device's loop.
    func checkMedia(_ request: MediaCheckRequest) {
        MediaFetcher.fetch(url: request.url, timeout: settings.mediaFetchTimeout, group: loop).whenSuccess { [self] result in
            loop.execute { [self] in
                let verdict = MediaCheckVerdict.judge(result, contentType: request.contentType)
                mediaFetches.append(result.jsonValue)
                if mediaFetches.count > Self.mediaFetchHistory { mediaFetches.removeFirst(mediaFetches.count - Self.mediaFetchHistory) }
                var fields: JSONObject = [
                    "url": .string(request.url), "mediaSessionId": .int(Int64(request.mediaSessionID)),
                    "result": .string(verdict.kind), "reason": .string(verdict.reason),
                ]
                if let status = result.status { fields.set("status", .int(Int64(status))) }
                if let code = verdict.failure { fields.set("detailedErrorCode", .int(Int64(code.rawValue))) }
                frameLogEvent("mediaChecked", connection: nil, peer: nil, fields: fields)
                let logFields: LogFields = [
                    "url": .string(request.url), "result": .string(verdict.kind), "status": .int(result.status ?? 0),
                    "bytes": .int(result.bytes), "detailedErrorCode": .int(verdict.failure?.rawValue ?? 0),
                ]
                if let code = verdict.failure {
                    log.warning("media check failed: \(request.url): \(verdict.reason) → LOAD_FAILED \(code.name ?? "") (\(code.rawValue))", logFields)
                } else {
                    log.info("media checked: \(request.url): \(verdict.reason)", logFields)
                }
                mutateState { state, now in
                    state.mediaChecked(mediaSessionID: request.mediaSessionID, failure: verdict.failure, reason: verdict.reason, now: now)
                }
            }
        }
    }

    /// A LOAD of media the simulator does not fetch plays unchecked; the frame log says so.
    func noteMediaNotChecked(url: String) {
        log.debug("media not checked: \(url) is not an http:// URL on a loopback host", ["url": .string(url)])
        frameLogEvent("mediaNotChecked", connection: nil, peer: nil, fields: [
            "url": .string(url), "reason": "not an http:// URL on a loopback host: plays unchecked",
        ])
    }
}
