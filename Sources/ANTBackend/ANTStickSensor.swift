import ANTDecoding
import Logging
import SensorBackend
import SensorFrames
import SerialPort
import SerialSessions
import Timestamps

/// ANT+ heart-rate straps through an ANT USB stick's tty (`/dev/ttyUSB0` from
/// usb-serial-simple for 0fcf:1008 and 0fcf:1009; the old 0fcf:1004 at 115200 baud).
///
/// It resets the stick, opens receive channels for up to 8 straps (see
/// ``ANTStickController``) and hands on each strap's broadcasts as `ant` frames named
/// `ant-<device number>`, the whole ANT message as the value (the pipeline decodes the pages).
/// When the stick is unplugged or stops answering it reports the straps stopped, backs off
/// and opens the tty again, until cancelled.
public struct ANTStickSensor: SensorBackend {
    /// Where the stick is and how to drive it.
    public struct Settings: Sendable, Hashable {
        public var path: String
        public var baud: Int
        /// Channels to open, one strap each (1…8).
        public var channels: Int
        /// Seconds the stick has to answer a command before it is sent again (three tries in
        /// all): a stick answers within milliseconds, but a busy machine may read it late.
        public var responseTimeout: Double

        public init(path: String, baud: Int = 115_200, channels: Int = ANTChannelSetup.stickChannelCount, responseTimeout: Double = 1) {
            self.path = path
            self.baud = baud
            self.channels = channels
            self.responseTimeout = responseTimeout
        }
    }

    /// How often a quiet port wakes the controller to check for unanswered commands.
    static let tickInterval: Duration = .milliseconds(250)

    public let settings: Settings
    let logger: Logger
    public var name: String { "ant:\(settings.path)" }

    public init(settings: Settings, logger: Logger) {
        self.settings = settings
        var logger = logger
        logger[metadataKey: "sensor"] = "ant:\(settings.path)"
        self.logger = logger
    }

    public func run(into sink: FrameSink) async throws {
        let stickID = SensorID(name)
        let sessions = PortSessions(path: settings.path, baud: settings.baud, transport: .ant, portID: stickID, logger: logger)
        let controllerSettings = ANTStickController.Settings(channels: settings.channels, responseTimeout: settings.responseTimeout)
        await sessions.run(into: sink) { port in
            var controller = ANTStickController(stickID: stickID, settings: controllerSettings)
            return try await Self.session(on: port, controller: &controller, sink: sink, logger: logger)
        }
        sink.report(SensorStatus(transport: .ant, device: stickID, state: .stopped(reason: "hrmd is stopping")))
    }

    /// Drives the stick on one open port until the port fails or the task is cancelled.
    /// Returns whether any strap streamed.
    static func session(on port: SerialPort, controller: inout ANTStickController, sink: FrameSink, logger: Logger) async throws -> Bool {
        var decoder = ANTFrameDecoder()
        var streamed = false
        var badFrames = (dropped: 0, checksums: 0)
        func perform(_ actions: [ANTStickController.Action]) throws(SerialPortError) {
            for action in actions {
                switch action {
                case .write(let message): try port.write(message.encoded())
                case .frame(let frame):
                    if frame.kind == .notify { streamed = true }
                    sink.send(frame)
                case .status(let device, let state): sink.report(SensorStatus(transport: .ant, device: device, state: state))
                case .log(let text): logger.info("\(text)")
                }
            }
        }
        do {
            try perform(controller.start(at: .now()))
            for try await chunk in port.chunks(idleTick: tickInterval) {
                let now = chunk.time
                for message in decoder.feed(chunk.bytes) {
                    try perform(try controller.receive(message, at: now))
                }
                try perform(try controller.tick(at: now))
                if decoder.droppedBytes != badFrames.dropped || decoder.badChecksums != badFrames.checksums {
                    logger.notice("skipped \(decoder.droppedBytes - badFrames.dropped) stray byte(s) and \(decoder.badChecksums - badFrames.checksums) frame(s) with a bad checksum from the stick")
                    badFrames = (decoder.droppedBytes, decoder.badChecksums)
                }
            }
        } catch {
            try? perform(controller.finish(at: .now(), reason: "\(error)"))
            throw error
        }
        try? perform(controller.finish(at: .now(), reason: "hrmd is stopping"))
        return streamed
    }
}
