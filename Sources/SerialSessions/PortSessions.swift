import Logging
import SensorBackend
import SensorFrames
import SerialPort
import Timestamps

/// Runs a backend's sessions on a serial port until the task is cancelled: open the port,
/// run one session, and when the port fails or goes away (unplugged), report
/// `backingOff`, wait (capped exponential backoff with jitter), and open it again. A session
/// that streamed resets the backoff. Used by the ANT stick and serial line backends.
public struct PortSessions: Sendable {
    public var path: String
    public var baud: Int
    public var transport: SensorTransport
    /// The name statuses use while no sensor is known (`ant:/dev/ttyUSB0`).
    public var portID: SensorID
    public var backoff: Backoff
    public var jitter: any JitterSource
    public var logger: Logger

    public init(
        path: String, baud: Int, transport: SensorTransport, portID: SensorID, backoff: Backoff = Backoff(),
        jitter: any JitterSource = SystemJitter(), logger: Logger
    ) {
        self.path = path
        self.baud = baud
        self.transport = transport
        self.portID = portID
        self.backoff = backoff
        self.jitter = jitter
        self.logger = logger
    }

    /// Runs `session` on each opened port. The session returns true when it streamed (so the
    /// backoff starts afresh) and throws when the port failed.
    public func run(into sink: FrameSink, session: @Sendable (SerialPort) async throws -> Bool) async {
        var failures = 0
        while !Task.isCancelled {
            let reason: String
            do {
                let port = try SerialPort(path: path, baud: baud)
                logger.info("opened \(path) at \(baud) baud")
                if try await session(port) { failures = 0 }
                if Task.isCancelled { return }
                reason = "the session ended"
            } catch let error as SerialPortError {
                reason = error.description
            } catch is CancellationError {
                return
            } catch {
                reason = "\(error)"
            }
            if Task.isCancelled { return }
            failures += 1
            let delay = backoff.delay(attempt: failures, unit: jitter.next())
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            let retryAt = Timestamp.now().advanced(bySeconds: seconds)
            // The first failure in a row is worth a warning; the retries after it, only debug.
            let level: Logger.Level = failures == 1 ? .warning : .debug
            logger.log(level: level, "\(reason); retrying in \((seconds * 10).rounded() / 10) s")
            sink.report(SensorStatus(transport: transport, device: portID, state: .backingOff(retryAt: retryAt, reason: reason)))
            do {
                try await Task.sleep(for: delay)
            } catch {
                return
            }
        }
    }
}
