import ArgumentParser
import CastCore
import CastNearby
import Glibc

/// `castline nearby publish`: publishes one message until a signal (or --lifetime), then withdraws it.
struct NearbyPublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a message until SIGINT/SIGTERM (or --lifetime), then withdraw it.",
        discussion: """
            The content is TEXT, or the bytes of --content-file (`-`: standard input). Larger than \
            \(NearbyMessage.maxContentBytes) bytes: refused with exit code 64, nothing is sent. Without permission: \
            exit code 4 (or wait with --wait-for-permission). While avahi-daemon is away the message is kept and \
            published again when it is back. JSON events: published, medium, permission, waiting, expired.
            """)

    @OptionGroup var options: NearbyOptions
    @OptionGroup var medium: NearbyMediumOptions

    @Option(name: .long, help: "The message's namespace.")
    var namespace = NearbyMessage.defaultNamespace

    @Option(name: .long, help: "The message's type (default: the empty type).")
    var type = ""

    @Option(name: .long, help: ArgumentHelp("Read the content from this file (`-`: standard input).", valueName: "path"))
    var contentFile: String?

    @Option(name: .long, help: ArgumentHelp("Withdraw after this many seconds and exit 0.", valueName: "seconds"))
    var lifetime: Double?

    @Argument(help: "The content as text.")
    var text: String?

    func validate() throws {
        if (text == nil) == (contentFile == nil) { throw ValidationError("give the content as TEXT or --content-file, not both or neither") }
        if let lifetime, !(lifetime > 0 && lifetime < 86_400 * 365) { throw ValidationError("--lifetime must be a positive number of seconds") }
    }

    func run() async throws {
        let content = try text.map { Array($0.utf8) } ?? Self.read(contentFile ?? "-")   // Ctrl-C still ends a read of stdin
        SignalWaiter.block([SIGINT, SIGTERM])
        let message = NearbyMessage(namespace: namespace, type: type, content: content)
        do { try message.validate() } catch {
            printError("castline: nearby publish: \(error)")
            throw CastlineExit.usage
        }
        let runtime = try NearbyRuntime(options: options, medium: medium)
        defer { runtime.close() }
        var events = runtime.events.makeAsyncIterator()
        guard case .started = try await runtime.start(&events) else { return }
        let strategy = NearbyStrategy(discoveryMode: .publish, medium: .mdns, lifetime: lifetime.map { .milliseconds(Int($0 * 1000)) })
        let continuation = runtime.continuation
        let publication: NearbyPublication
        do {
            publication = try runtime.manager.publish(message, strategy: strategy, expired: { continuation.yield(.expired) })
        } catch {
            throw runtime.fail(error)
        }
        runtime.printer.line("published", ["namespace": .string(namespace), "type": .string(type), "bytes": .int(Int64(content.count)),
                                           "id": .string(String(publication.id, radix: 16))],
                             text: "publishing \(message) (\(content.count) bytes) until SIGINT/SIGTERM")
        while let event = await events.next() {
            if case .signal = event { break }
            if case .expired = event {
                runtime.printer.line("expired", [:], text: "the publication's lifetime ended")
                break
            }
        }
        publication.cancel()
    }

    /// The bytes of `path` (`-`: standard input), at most one byte over the limit (the rest is not read).
    static func read(_ path: String) throws -> [UInt8] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            printError("castline: nearby publish: cannot read \(path): \(String(cString: strerror(errno)))")
            throw CastlineExit.usage
        }
        defer { if fd != 0 { close(fd) } }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= NearbyMessage.maxContentBytes {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 {
                printError("castline: nearby publish: cannot read \(path): \(String(cString: strerror(errno)))")
                throw CastlineExit.usage
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }
}
