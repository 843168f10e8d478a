import SensorFrames
import Timestamps

/// What a BLE strap's connection does between one link and the next, through bluetoothd or
/// straight through the kernel alike: note how long the link streamed (for the
/// ``LinkAgeDiagnosis``), report `backingOff` with the reason and the time of the next
/// attempt, and say how long to wait — capped exponential backoff, starting afresh after a
/// link that streamed.
public struct LinkRetry: Sendable {
    public let device: SensorID
    private let board: StatusBoard
    private let backoff: Backoff
    private let jitter: any JitterSource
    private var diagnosis: LinkAgeDiagnosis
    private var attempt = 0

    /// Starts with no diagnosis on `device`: a new bluetoothd or adapter lifetime may bring
    /// new conditions, so what earlier links did says nothing.
    public init(device: SensorID, board: StatusBoard, backoff: Backoff, jitter: any JitterSource, diagnosis: LinkAgeDiagnosis) {
        self.device = device
        self.board = board
        self.backoff = backoff
        self.jitter = jitter
        self.diagnosis = diagnosis
        board.note(device, nil)
    }

    /// A link ended (or never came up) `reason`; it streamed for `streamedFor`, nil when it
    /// never streamed. Reports `backingOff` and returns how long to wait before the next attempt.
    public mutating func linkEnded(reason: String, streamedFor: Duration?) -> Duration {
        if let age = streamedFor {
            diagnosis.linkEnded(after: age)
            board.note(device, diagnosis.current)  // rides on the backing-off report below
        }
        attempt = streamedFor != nil ? 1 : attempt + 1
        let delay = backoff.delay(attempt: attempt, unit: jitter.next())
        board.report(device, .backingOff(retryAt: Timestamp.now().advanced(bySeconds: delay / .seconds(1)), reason: reason))
        return delay
    }
}
