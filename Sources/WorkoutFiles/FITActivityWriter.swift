import FITDecoding
import HealthModel
import Timestamps

/// Writes a workout as a FIT activity file (FIT protocol 2.0, little-endian), the file
/// Garmin Connect, Strava, GoldenCheetah and TrainingPeaks import: `file_id`, the timer's
/// start, stop and restart `event`s (pauses), one `record` a second of the active time (the
/// last heart-rate sample that starts in it), `hrv` messages with the RR intervals of the
/// active time, one `lap` per lap, the `session` and the `activity`. Its heart rates are whole
/// count/min (FIT's `uint8`), its times whole seconds.
public struct FITActivityWriter: Sendable {
    /// The FIT profile version the file says it follows (21.40).
    static let profileVersion: UInt16 = 2140

    public init() {}

    /// The whole file.
    public func write(_ recording: WorkoutRecording) throws(WorkoutFileError) -> [UInt8] {
        var messages = FITMessages()
        let workout = recording.workout
        let start = try Self.time(workout.start), end = try Self.time(recording.end)
        let sport = FITSport(workout.activity)
        messages.add(.fileID, [
            .enumeration(0, 4),  // type: activity
            .uint16(1, 255),  // manufacturer: development
            .uint16(2, 1),  // product
            .uint32z(3, Self.serial(of: workout.id)),
            .uint32(4, start),  // time_created
        ])
        // Timer events and records in time order: a pause stops the timer, a resume restarts it.
        var timed: [(time: UInt32, order: Int, fields: FITMessages.Entry)] = [
            (start, 0, FITMessages.Entry(.event, [.uint32(253, start), .enumeration(0, 0), .enumeration(1, 0)]))
        ]
        for event in workout.events {
            let time = try Self.time(event.time)
            switch event.type {
            case .pause: timed.append((time, 1, FITMessages.Entry(.event, [.uint32(253, time), .enumeration(0, 0), .enumeration(1, 4)])))
            case .resume: timed.append((time, 1, FITMessages.Entry(.event, [.uint32(253, time), .enumeration(0, 0), .enumeration(1, 0)])))
            default: break
            }
        }
        // One record a second: the last sample that starts in it.
        var lastRecordTime: UInt32?
        for point in recording.activePoints {
            let bpm = point.value.rounded()
            guard bpm >= 1, bpm < 255 else { continue }
            let time = try Self.time(point.time)
            let record = (time, 2, FITMessages.Entry(.record, [.uint32(253, time), .uint8(3, UInt8(bpm))]))
            if lastRecordTime == time { timed[timed.count - 1] = record } else { timed.append(record) }
            lastRecordTime = time
        }
        // RR intervals in `hrv` messages of up to five, each after the records of its second.
        let beats = recording.activeRRIntervals
        for first in stride(from: 0, to: beats.count, by: 5) {
            let group = beats[first..<min(first + 5, beats.count)]
            let time = try Self.time(group[group.startIndex].time)
            let values = group.map { UInt16(clamping: Int(($0.value).rounded())) } + Array(repeating: 0xFFFF, count: 5 - group.count)
            timed.append((time, 2, FITMessages.Entry(.hrv, [.uint16Array(0, values)])))
        }
        timed.append((end, 3, FITMessages.Entry(.event, [.uint32(253, end), .enumeration(0, 0), .enumeration(1, 4)])))
        // Each lap's message comes after its last record.
        for (index, lap) in recording.summary.laps.enumerated() {
            let lapEnd = try Self.time(lap.end)
            timed.append((lapEnd, 4, FITMessages.Entry(.lap, [
                .uint16(254, UInt16(clamping: index)), .uint32(253, lapEnd), .enumeration(0, 9), .enumeration(1, 1),
                .uint32(2, try Self.time(lap.start)), .uint32(7, Self.milliseconds(lap.end.secondsSinceEpoch - lap.start.secondsSinceEpoch)),
                .uint32(8, Self.milliseconds(lap.activeSeconds)), .uint8(15, Self.heartRate(lap.heartRate?.average)),
                .uint8(16, Self.heartRate(lap.heartRate?.maximum)), .enumeration(24, index == recording.summary.laps.count - 1 ? 7 : 0),
                .enumeration(25, sport.sport), .enumeration(39, sport.subSport),
            ])))
        }
        for entry in timed.enumerated().sorted(by: { ($0.element.time, $0.element.order, $0.offset) < ($1.element.time, $1.element.order, $1.offset) }) {
            messages.add(entry.element.fields)
        }
        let summary = recording.summary
        messages.add(.session, [
            .uint16(254, 0), .uint32(253, end), .enumeration(0, 8), .enumeration(1, 1), .uint32(2, start),
            .enumeration(5, sport.sport), .enumeration(6, sport.subSport),
            .uint32(7, Self.milliseconds(summary.elapsedSeconds)), .uint32(8, Self.milliseconds(summary.activeSeconds)),
            .uint16(11, summary.energyKilocalories.map { UInt16(clamping: Int($0.rounded())) } ?? 0xFFFF),
            .uint8(16, Self.heartRate(summary.heartRate?.average)), .uint8(17, Self.heartRate(summary.heartRate?.maximum)),
            .uint16(25, 0), .uint16(26, UInt16(clamping: summary.laps.count)), .enumeration(28, 0),
        ])
        messages.add(.activity, [
            .uint32(253, end), .uint32(0, Self.milliseconds(summary.activeSeconds)), .uint16(1, 1), .enumeration(2, 0),
            .enumeration(3, 26), .enumeration(4, 1),
        ])
        return messages.file(profileVersion: Self.profileVersion)
    }

    /// FIT time: whole seconds since 1989-12-31T00:00:00Z; times before it or past 2125 do not fit.
    static func time(_ time: Timestamp) throws(WorkoutFileError) -> UInt32 {
        let seconds = time.microsecondsSinceEpoch / 1_000_000 - FITDecoder.epochOffset
        guard seconds >= Int64(FITDecoder.relativeLimit), let fitted = UInt32(exactly: seconds), fitted < 0xFFFF_FFFF else {
            throw WorkoutFileError("\(time) cannot be written as FIT time (1998 to 2125)")
        }
        return fitted
    }

    static func milliseconds(_ seconds: Double) -> UInt32 { UInt32(clamping: Int64((max(0, seconds) * 1000).rounded())) }

    /// A heart rate as FIT's `uint8`, or its "no value".
    static func heartRate(_ bpm: Double?) -> UInt8 {
        guard let bpm, bpm.isFinite, bpm >= 1, bpm < 254.5 else { return 0xFF }
        return UInt8(bpm.rounded())
    }

    /// A serial number from the workout's id (never 0, FIT's `uint32z` "no value").
    static func serial(of id: String) -> UInt32 {
        let hash = id.utf8.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 }
        return hash == 0 ? 1 : hash
    }
}

/// FIT's sport and sub-sport of an activity (the profile's `sport` and `sub_sport`).
struct FITSport: Sendable, Hashable {
    var sport: UInt8
    var subSport: UInt8

    init(sport: UInt8, subSport: UInt8) {
        self.sport = sport
        self.subSport = subSport
    }

    init(_ activity: WorkoutActivity) {
        (sport, subSport) =
            switch activity {
            case .running: (1, 0)
            case .cycling: (2, 0)
            case .walking: (11, 0)
            case .hiking: (17, 0)
            case .rowing: (15, 0)
            case .swimming: (5, 0)
            case .elliptical: (4, 15)
            case .stairClimbing: (4, 16)
            case .hiit: (62, 70)
            case .strengthTraining: (10, 20)
            case .crossTraining: (10, 26)
            case .yoga: (10, 43)
            case .pilates: (10, 44)
            case .dance: (83, 0)
            case .boxing: (47, 0)
            case .other: (0, 0)
            }
    }
}

/// FIT messages as they are written: each global message gets a local type and its definition
/// the first time it is written with a set of fields.
struct FITMessages {
    /// Global message numbers of the profile.
    enum Global: UInt16 {
        case fileID = 0
        case session = 18
        case lap = 19
        case record = 20
        case event = 21
        case activity = 34
        case hrv = 78
    }

    /// One field's value with its number and base type.
    enum Field {
        case enumeration(UInt8, UInt8)
        case uint8(UInt8, UInt8)
        case uint16(UInt8, UInt16)
        case uint32(UInt8, UInt32)
        case uint32z(UInt8, UInt32)
        /// An array of uint16 (its size is the count × 2).
        case uint16Array(UInt8, [UInt16])

        var number: UInt8 {
            switch self {
            case .enumeration(let number, _), .uint8(let number, _), .uint16(let number, _), .uint32(let number, _), .uint32z(let number, _),
                .uint16Array(let number, _): number
            }
        }

        /// (size, base type).
        var layout: (UInt8, UInt8) {
            switch self {
            case .enumeration: (1, 0x00)
            case .uint8: (1, 0x02)
            case .uint16: (2, 0x84)
            case .uint32: (4, 0x86)
            case .uint32z: (4, 0x8C)
            case .uint16Array(_, let values): (UInt8(clamping: values.count * 2), 0x84)
            }
        }

        func append(to bytes: inout [UInt8]) {
            switch self {
            case .enumeration(_, let value), .uint8(_, let value): bytes.append(value)
            case .uint16(_, let value): bytes += [UInt8(value & 0xFF), UInt8(value >> 8)]
            case .uint32(_, let value), .uint32z(_, let value): bytes += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            case .uint16Array(_, let values): for value in values { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
            }
        }
    }

    struct Entry {
        var global: Global
        var fields: [Field]
        init(_ global: Global, _ fields: [Field]) {
            self.global = global
            self.fields = fields
        }
    }

    /// The message records so far.
    private var records: [UInt8] = []
    /// The local type of each (global message, field layout) defined so far.
    private var locals: [String: UInt8] = [:]
    /// The local type the next new layout takes (they wrap after 15).
    private var nextLocal: UInt8 = 0

    mutating func add(_ global: Global, _ fields: [Field]) { add(Entry(global, fields)) }

    mutating func add(_ entry: Entry) {
        let key = "\(entry.global.rawValue):" + entry.fields.map { "\($0.number)/\($0.layout.0)" }.joined(separator: ",")
        let local: UInt8
        if let known = locals[key] {
            local = known
        } else {
            // 16 local types: when they run out, the oldest layout's is defined anew.
            local = nextLocal
            nextLocal = (nextLocal + 1) % 16
            locals = locals.filter { $0.value != local }
            locals[key] = local
            records.append(0x40 | local)
            records += [0, 0, UInt8(entry.global.rawValue & 0xFF), UInt8(entry.global.rawValue >> 8), UInt8(entry.fields.count)]
            for field in entry.fields { records += [field.number, field.layout.0, field.layout.1] }
        }
        records.append(local)
        for field in entry.fields { field.append(to: &records) }
    }

    /// The file: the 14-byte header with its CRC, the records, the file's CRC.
    func file(profileVersion: UInt16) -> [UInt8] {
        let size = UInt32(records.count)
        var bytes: [UInt8] = [14, 0x20, UInt8(profileVersion & 0xFF), UInt8(profileVersion >> 8)]
        bytes += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        bytes += Array(".FIT".utf8)
        let headerCRC = FITCRC.checksum(bytes)
        bytes += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        bytes += records
        let crc = FITCRC.checksum(bytes)
        bytes += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        return bytes
    }
}
