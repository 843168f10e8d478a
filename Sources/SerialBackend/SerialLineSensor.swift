import Logging
import SensorBackend
import SensorFrames
import SerialPort
import SerialSessions
import Timestamps

/// A serial heart-rate sensor (a microcontroller board on `/dev/ttyACM0`, say) speaking the
/// line protocol of ``SerialHeartRateLine``: `HR 72 RR 812 790`. Each line becomes one
/// `serial` frame (the line's bytes, without the newline; the pipeline parses and checks it).
/// When the port goes away it reports the sensor stopped, backs off and opens it again,
/// until cancelled.
public struct SerialLineSensor: SensorBackend {
    /// Where the sensor is.
    public struct Settings: Sendable, Hashable {
        public var path: String
        public var baud: Int
        /// The device name in the store; `serial-<tty name>` unless given.
        public var id: SensorID

        public init(path: String, baud: Int = 115_200, id: SensorID? = nil) {
            self.path = path
            self.baud = baud
            self.id = id ?? SensorID("serial-" + (path.split(separator: "/").last.map(String.init) ?? path))
        }
    }

    public let settings: Settings
    let logger: Logger
    public var name: String { "serial:\(settings.path)" }

    public init(settings: Settings, logger: Logger) {
        self.settings = settings
        var logger = logger
        logger[metadataKey: "sensor"] = "\(settings.id)"
        self.logger = logger
    }

    public func run(into sink: FrameSink) async throws {
        let id = settings.id
        let sessions = PortSessions(path: settings.path, baud: settings.baud, transport: .serial, portID: id, logger: logger)
        await sessions.run(into: sink) { port in
            try await Self.session(on: port, id: id, sink: sink, logger: logger)
        }
        sink.report(SensorStatus(transport: .serial, device: id, state: .stopped(reason: "hrmd is stopping")))
    }

    /// Reads lines until the port fails or the task is cancelled; returns whether any arrived.
    static func session(on port: SerialPort, id: SensorID, sink: FrameSink, logger: Logger) async throws -> Bool {
        var framer = LineFramer()
        var streaming = false
        sink.report(SensorStatus(transport: .serial, device: id, state: .searching))
        defer {
            if streaming { sink.send(SensorFrame(time: .now(), transport: .serial, device: id, kind: .disconnected)) }
        }
        for try await chunk in port.chunks() {
            let now = chunk.time
            let overlong = framer.overlongLines
            for line in framer.feed(chunk.bytes) where !line.isEmpty {
                if !streaming {
                    streaming = true
                    logger.info("\(port.path) is sending lines")
                    sink.send(SensorFrame(time: now, transport: .serial, device: id, kind: .connected))
                    sink.report(SensorStatus(transport: .serial, device: id, state: .streaming))
                }
                sink.send(SensorFrame(time: now, transport: .serial, device: id, kind: .notify, value: line))
            }
            if framer.overlongLines > overlong {
                logger.notice("dropped an overlong line from \(port.path) (wrong baud rate?)")
            }
        }
        return streaming
    }
}
