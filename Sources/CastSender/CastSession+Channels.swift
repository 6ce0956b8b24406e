import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore

/// Custom namespace channels and the device volume.
extension CastSession {
    // MARK: - Custom channels

    /// Registers `channel` on this session (replacing one on the same namespace).
    public func add(_ channel: GenericChannel) {
        channels[channel.namespace] = channel
        channel.attach(self, log: log)
        log.info("channel \(channel.namespace.rawValue) added", ["namespace": .string(channel.namespace.rawValue)])
    }

    /// Whether `channel` is the one registered on its namespace.
    public func hasChannel(_ channel: GenericChannel) -> Bool { channels[channel.namespace] === channel }

    public func remove(_ channel: GenericChannel) {
        guard channels[channel.namespace] === channel else { return }
        channels[channel.namespace] = nil
    }

    func deliverToChannel(_ message: CastMessage) {
        guard let channel = channels[message.namespace] else {
            log.debug("message on unregistered namespace \(message.namespace.rawValue) ignored",
                      ["namespace": .string(message.namespace.rawValue)])
            return
        }
        channel.deliver(message)
    }

    // MARK: - Device volume

    /// Sets the device volume (0…1).
    public func setDeviceVolume(_ level: Double) -> CastRequest<CastDeviceStatus> {
        deviceVolumeRequest(Volume(level: min(max(level.isNaN ? 0 : level, 0), 1)))
    }

    /// Mutes or unmutes the device.
    public func setDeviceMuted(_ muted: Bool) -> CastRequest<CastDeviceStatus> {
        deviceVolumeRequest(Volume(muted: muted))
    }

    func deviceVolumeRequest(_ volume: Volume) -> CastRequest<CastDeviceStatus> {
        request(namespace: .receiver, destination: .receiver0, type: "SET_VOLUME", timeout: nil,
                build: { ReceiverMessage.setVolume(requestID: $0, volume: volume).json },
                map: { Self.receiverStatusReply($0).map(CastDeviceStatus.init) })
    }
}
