/// Why the simulator could not do what it was asked. Every case says what to do next.
public enum SimulatorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A socket could not be bound (port in use, address not local, permission).
    case bind(address: String, port: Int, reason: String)
    /// Reading or writing a file failed.
    case io(String)
    /// A certificate or key could not be made.
    case crypto(String)
    /// The configuration is invalid (`file:line:column: message` when it came from a file).
    case configuration(String)
    /// A control command was malformed or named an unknown device.
    case control(String)

    public var description: String {
        switch self {
        case .bind(let address, let port, let reason):
            return "cannot listen on \(address):\(port): \(reason)"
                + " (another simulator or device service running? choose other ports or addresses)"
        case .io(let message), .crypto(let message), .configuration(let message), .control(let message):
            return message
        }
    }
}
