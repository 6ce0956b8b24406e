import Dispatch
import Glibc

/// Every arrival of the given signals, as a stream (SIGHUP can come many times; SignalWaiter
/// waits for one). The signals' default actions are replaced by SIG_IGN first.
final class SignalStream: @unchecked Sendable {
    let signals: AsyncStream<Int32>
    private var sources: [DispatchSourceSignal] = []

    init(_ numbers: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        let queue = DispatchQueue(label: "castline.signal-stream")
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
    }

    deinit { for source in sources { source.cancel() } }
}
