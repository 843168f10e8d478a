import Logging
import SensorBackend
import SensorFrames
import Timestamps

/// Plays a recording into the daemon as if live (`--sensor replay:FILE`): frames keep their
/// original timestamps (so a replay of what was stored live adds nothing) and are paced by
/// the gaps between them, divided by `speed`. Bad lines and records are logged with their
/// numbers and skipped. Returns when the recording ends.
public struct ReplaySensor: SensorBackend {
    public let path: String
    public let speed: Double
    /// How a btsnoop capture is read (the Heart Rate Measurement handle it lacks discovery of).
    public let captureOptions: BTSnoopOptions
    private let logger: Logger

    /// `speed` 1 plays in real time, 10 ten times faster; `.infinity` as fast as possible.
    public init(path: String, speed: Double = 1, captureOptions: BTSnoopOptions = .init(), logger: Logger) {
        self.path = path
        self.speed = speed
        self.captureOptions = captureOptions
        self.logger = logger
    }

    public var name: String { "replay:\(path)" }

    public func run(into sink: FrameSink) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        var first: Timestamp?
        var played = 0, bad = 0
        for entry in try RecordingSource.entries(of: path, captureOptions: captureOptions) {
            switch entry {
            case .badLine(let line, let reason):
                bad += 1
                logger.warning("\(path):\(line): skipped: \(reason)")
            case .badRecord(let record, let reason):
                bad += 1
                logger.warning("\(path): record \(record): skipped: \(reason)")
            case .unusable(let reason):
                bad += 1
                logger.warning("\(path): \(reason)")
            case .notice(let text):
                logger.notice("\(path): \(text)")
            case .frame(let frame, _):
                if speed.isFinite, speed > 0 {
                    let origin = first ?? frame.time
                    first = origin
                    let offset = Double(frame.time.microsecondsSinceEpoch - origin.microsecondsSinceEpoch) / 1e6 / speed
                    if offset > 0 { try await Task.sleep(until: start.advanced(by: .seconds(offset)), clock: clock) }
                } else {
                    try Task.checkCancellation()
                }
                sink.send(frame)
                played += 1
            }
        }
        logger.info("replay of \(path) finished: \(played) frames, \(bad) bad lines or records")
    }
}

/// Opens a recording of any kind the project reads, told apart by content.
public enum RecordingSource {
    /// The entries of the recording at `path`; `captureOptions` apply to a btsnoop capture.
    public static func entries(of path: String, captureOptions: BTSnoopOptions = .init()) throws(RecordingError)
        -> AnySequence<RecordingEntry>
    {
        switch try TraceRecording.kind(of: path) {
        case .trace: AnySequence(try TraceRecording(path: path))
        case .fit: AnySequence(try FITRecording(path: path))
        case .btsnoop: AnySequence(try BTSnoopRecording(path: path, options: captureOptions))
        }
    }
}
