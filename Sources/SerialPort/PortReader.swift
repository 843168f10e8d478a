import Foundation
import Glibc
import ReaderThreads
import SystemPackage
import Timestamps

/// Bytes read from a serial port, stamped with when they were read: a consumer that runs
/// late (a busy machine) still knows when each byte arrived.
public struct SerialChunk: Sendable, Hashable {
    /// The bytes of one `read(2)`; empty for an idle tick.
    public var bytes: [UInt8]
    /// When they were read (or when the idle tick fired).
    public var time: Timestamp

    public init(bytes: [UInt8], time: Timestamp) {
        self.bytes = bytes
        self.time = time
    }
}

extension SerialPort {
    /// The bytes arriving on the port, in chunks as `read(2)` returns them, each stamped with
    /// the time it was read.
    ///
    /// A thread of its own polls the port and a wake-up pipe, so waiting never occupies the
    /// cooperative pool. The stream finishes when the consumer stops iterating (task
    /// cancellation wakes the thread through the pipe) and throws
    /// ``SerialPortError/hangup(path:)`` when the device goes away (POLLHUP, EIO, or end of
    /// file) or ``SerialPortError/read(path:_:)`` for any other failure. With an `idleTick`,
    /// an empty chunk arrives whenever the port stays quiet that long, so a consumer can check
    /// its timeouts without a timer of its own.
    public func chunks(maximumLength: Int = 4096, idleTick: Duration? = nil) -> AsyncThrowingStream<SerialChunk, any Error> {
        let (stream, continuation) = AsyncThrowingStream<SerialChunk, any Error>.makeStream()
        let wakeUp: WakeUpPipe
        do {
            wakeUp = try WakeUpPipe()
        } catch {
            continuation.finish(throwing: SerialPortError.read(path: path, Errno(rawValue: error.errno)))
            return stream
        }
        continuation.onTermination = { _ in wakeUp.signal() }
        let thread = Thread { [self] in
            do {
                try pump(into: continuation, wakeUp: wakeUp, maximumLength: maximumLength, idleTick: idleTick)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.name = "serial \(path)"
        thread.start()
        return stream
    }

    /// Reads until the wake-up pipe is signalled or the port fails.
    private func pump(
        into continuation: AsyncThrowingStream<SerialChunk, any Error>.Continuation, wakeUp: WakeUpPipe, maximumLength: Int,
        idleTick: Duration?
    ) throws(SerialPortError) {
        var buffer = [UInt8](repeating: 0, count: maximumLength)
        while true {
            let readiness: WakeUpPipe.Readiness
            do {
                readiness = try wakeUp.wait(for: descriptor.rawValue, timeoutMilliseconds: idleTick?.milliseconds ?? -1)
            } catch {
                throw .read(path: path, Errno(rawValue: error.errno))
            }
            switch readiness {
            case .wokenUp: return
            case .hungUp: throw .hangup(path: path)
            case .timedOut:
                if case .terminated = continuation.yield(SerialChunk(bytes: [], time: .now())) { return }
                continue
            case .readable: break
            }
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch let errno as Errno where errno == .resourceTemporarilyUnavailable {
                continue
            } catch let errno as Errno where errno == .ioError {
                throw .hangup(path: path)
            } catch {
                throw .read(path: path, (error as? Errno) ?? .ioError)
            }
            guard count > 0 else { throw .hangup(path: path) }
            if case .terminated = continuation.yield(SerialChunk(bytes: Array(buffer[..<count]), time: .now())) { return }
        }
    }
}
