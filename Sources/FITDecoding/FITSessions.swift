/// The sessions of an activity file, with the laps and timer stops inside them: what a
/// workout is made of. Collected in the first pass over the file (`FITHeartRateSummary`),
/// keeping at most `sessionLimit` sessions and `markLimit` laps and timer events whatever the
/// file holds; what is past them is counted, not kept.
public struct FITSessions: Sendable, Equatable {
    /// One `session` message: a sport from a start, for an elapsed time. Times are Unix
    /// seconds.
    public struct Session: Sendable, Equatable {
        public var sport: UInt8
        public var subSport: UInt8
        public var start: Int64
        /// Start plus `total_elapsed_time` (timer pauses included), or the message's timestamp
        /// without one.
        public var end: Int64

        public init(sport: UInt8, subSport: UInt8, start: Int64, end: Int64) {
            self.sport = sport
            self.subSport = subSport
            self.start = start
            self.end = end
        }
    }

    /// A time the timer stopped or started, or a lap ended (Unix seconds).
    public enum Mark: Sendable, Equatable {
        case timerStop(Int64)
        case timerStart(Int64)
        case lapEnd(Int64)

        public var time: Int64 {
            switch self {
            case .timerStop(let time), .timerStart(let time), .lapEnd(let time): time
            }
        }
    }

    /// Sessions kept; a file with more (10,000 in a hostile one) keeps the first ones.
    public static let sessionLimit = 256
    /// Laps and timer events kept, over the whole file.
    public static let markLimit = 16_384

    /// Sessions with an absolute start and an end after it, in file order.
    public private(set) var sessions: [Session] = []
    /// Laps' ends and timer stops and starts with absolute times, in file order.
    public private(set) var marks: [Mark] = []
    /// `session` messages in the file, kept or not.
    public private(set) var sessionCount = 0
    /// Sessions without an absolute start, or ending before they start: not kept.
    public private(set) var unusableSessions = 0
    /// Laps and timer events past `markLimit`.
    public private(set) var marksDropped = 0

    public init() {}

    /// Whether every session and mark the file holds was kept.
    public var isComplete: Bool { sessionCount == sessions.count + unusableSessions && marksDropped == 0 }

    /// The marks inside `session` (after its start, before its end), in time order.
    public func marks(of session: Session) -> [Mark] {
        marks.filter { $0.time > session.start && $0.time < session.end }.sorted { $0.time < $1.time }
    }

    /// Takes a `session`, `lap` or `event` message; others are ignored.
    mutating func add(_ message: FITMessage) {
        switch message.globalMessage {
        case FITProfile.Session.message:
            sessionCount += 1
            typealias Field = FITProfile.Session
            guard let start = message.value(Field.startTime, as: UInt32.self).flatMap(FITDecoder.unixSeconds(fromFIT:)) else {
                unusableSessions += 1
                return
            }
            let end =
                message.value(Field.totalElapsedTime, as: UInt32.self).map { start + (Int64($0) + 500) / 1000 }
                ?? message.timestamp.flatMap(FITDecoder.unixSeconds(fromFIT:))
            guard let end, end > start else {
                unusableSessions += 1
                return
            }
            guard sessions.count < Self.sessionLimit else { return }
            sessions.append(Session(
                sport: message.value(Field.sport) ?? 0, subSport: message.value(Field.subSport) ?? 0, start: start, end: end))
        case FITProfile.Lap.message:
            if let end = message.timestamp.flatMap(FITDecoder.unixSeconds(fromFIT:)) { keep(.lapEnd(end)) }
        case FITProfile.Event.message:
            typealias Field = FITProfile.Event
            guard message.value(Field.event, as: UInt8.self) == Field.timer, let type = message.value(Field.eventType, as: UInt8.self),
                let time = message.timestamp.flatMap(FITDecoder.unixSeconds(fromFIT:))
            else { return }
            if type == Field.start {
                keep(.timerStart(time))
            } else if Field.stops.contains(type) {
                keep(.timerStop(time))
            }
        default:
            break
        }
    }

    private mutating func keep(_ mark: Mark) {
        guard marks.count < Self.markLimit else {
            marksDropped += 1
            return
        }
        marks.append(mark)
    }
}
