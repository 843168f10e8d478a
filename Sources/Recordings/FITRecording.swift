@preconcurrency import Glibc
import ByteSources
import FITDecoding
import SensorFrames
import Timestamps

/// A FIT activity file as a recording: its heart-rate records become frames in the GATT
/// heart-rate encoding (transport `fit`), so they take the same decode → convert →
/// authorize → store path as live data. RR intervals from `hrv` messages ride on the record
/// frames whose second they fall in; `device_info` (the heart-rate strap's, else the
/// recording device's) becomes Device Information reads.
///
/// The file is read in two passes, in bounded memory whatever its size: the first checks it
/// (damage and CRC) and learns the device and the first time, the second hands out the
/// frames as it reads the records, and the RR intervals from a second window on the file.
public struct FITRecording: Sequence, RecordingReader {
    /// What was wrong with the file, when it was read despite damage.
    public let damage: String?
    /// The entries before the records: an unusable part, the connection, the device's
    /// information; handed out from `nextPreamble` on.
    private var preamble: [RecordingEntry] = []
    private var nextPreamble = 0
    /// The records, once the preamble is out; nil when none has a time.
    private var records: FITHeartRateRecords?
    private var beats: FITRRIntervals
    /// The next beat not yet placed, and where the beats placed so far end (Unix seconds).
    private var pendingBeat: Double?
    private var beatEnd: Double = 0
    /// The strap (or recorder) the frames are from.
    public let device: SensorID
    /// The file's sessions, laps and timer events: its workouts.
    public let sessions: FITSessions

    /// Reads the FIT file in `source`; `name` stands for it in messages. A damaged file is an
    /// error that says what could be read, unless `acceptingDamage`, when what was read
    /// before the damage is used.
    public init(source: ByteSource, name: String, acceptingDamage: Bool = false) throws(RecordingError) {
        let summary: FITHeartRateSummary
        do {
            summary = try FITHeartRateSummary(scanning: source)
            records = try FITHeartRateRecords(source, summary: summary)
            beats = try FITRRIntervals(source)
        } catch {
            throw .damaged(path: name, reason: "\(error)")
        }
        if let damage = summary.damage, !acceptingDamage {
            throw .damaged(
                path: name,
                reason: "\(damage); \(summary.recordCount) heart-rate records were read before it (store them with --accept-damaged)")
        }
        damage = summary.damage.map { "\($0)" }
        sessions = summary.sessions
        let sensor = summary.strap ?? summary.recorder
        device = SensorID((sensor?.serialNumber ?? summary.creatorSerial).map { "fit-\($0)" } ?? "fit")
        if summary.unanchoredCount > 0 {
            preamble.append(.unusable(reason: "\(summary.unanchoredCount) heart-rate records have device-relative times and the file gives no absolute time for them; they are not stored"))
        }
        guard let firstSeconds = summary.firstUnixSeconds else {
            records = nil
            return
        }
        let first = Timestamp(microsecondsSinceEpoch: firstSeconds * 1_000_000)
        preamble.append(.frame(frame(.connected, at: first), line: 0))
        for (field, text) in Self.deviceInformation(sensor) {
            preamble.append(.frame(frame(.read, field.characteristic, Array(text.utf8), at: first), line: 0))
        }
        // Beats are placed from the first record on; each record frame carries the beats
        // that ended since the previous one.
        beatEnd = first.secondsSinceEpoch
        pendingBeat = beats.next()
    }

    /// Bytes of the file the second pass has read (for progress).
    public var bytesRead: Int { records?.bytesRead ?? 0 }

    public mutating func next() -> RecordingEntry? {
        if nextPreamble < preamble.count {
            defer { nextPreamble += 1 }
            return preamble[nextPreamble]
        }
        while let record = records?.next() {
            guard let seconds = record.unixSeconds else { continue }
            let time = Timestamp(microsecondsSinceEpoch: seconds * 1_000_000)
            var intervals: [UInt16] = []
            while let interval = pendingBeat, beatEnd + interval <= time.secondsSinceEpoch {
                beatEnd += interval
                if interval > 0, interval < 64 { intervals.append(UInt16((interval * 1024).rounded())) }
                pendingBeat = beats.next()
            }
            let measurement = HeartRateMeasurement(heartRate: UInt16(record.heartRate), rrIntervals: intervals)
            return .frame(frame(.notify, .heartRateMeasurement, measurement.encoded(), at: time), line: 0)
        }
        return nil
    }

    private func frame(_ kind: FrameKind, _ characteristic: CharacteristicID? = nil, _ value: [UInt8] = [], at time: Timestamp) -> SensorFrame {
        SensorFrame(time: time, transport: .fit, device: device, kind: kind, characteristic: characteristic, value: value)
    }

    private static func deviceInformation(_ device: FITActivity.Device?) -> [(DeviceInformationField, String)] {
        guard let device else { return [] }
        var fields: [(DeviceInformationField, String)] = []
        if let manufacturer = device.manufacturer {
            fields.append((.manufacturerName, FITManufacturer.name(manufacturer)))
        }
        if let product = device.product { fields.append((.modelNumber, "product \(product)")) }
        if let software = device.softwareVersion { fields.append((.softwareRevision, String(software))) }
        if let hardware = device.hardwareVersion { fields.append((.hardwareRevision, String(hardware))) }
        return fields
    }
}

extension FITRecording {
    /// Reads the FIT file at `path`, a window at a time. Damage is treated as by
    /// `init(source:name:acceptingDamage:)`.
    public init(path: String, acceptingDamage: Bool = false) throws(RecordingError) {
        try self.init(source: FileBytes.open(path: path), name: path, acceptingDamage: acceptingDamage)
    }

    /// Reads the FIT file open as `descriptor` (with pread: its offset does not move, and the
    /// caller still owns and closes it). `name` stands for the file in messages.
    public init(descriptor: Int32, name: String, acceptingDamage: Bool = false) throws(RecordingError) {
        try self.init(source: FileBytes.open(descriptor: descriptor, name: name), name: name, acceptingDamage: acceptingDamage)
    }

    /// Decodes the bytes of a FIT file held in memory; `name` stands for it in messages.
    public init(bytes: [UInt8], name: String, acceptingDamage: Bool = false) throws(RecordingError) {
        try self.init(source: ByteSource(bytes), name: name, acceptingDamage: acceptingDamage)
    }
}

/// Names of the FIT manufacturer ids seen on chest straps and the devices that record them.
enum FITManufacturer {
    static func name(_ id: UInt16) -> String {
        switch id {
        case 1: "Garmin"
        case 23: "Suunto"
        case 32: "Wahoo Fitness"
        case 69: "Stages Cycling"
        case 123: "Polar Electro"
        case 255: "development"
        case 294: "COROS"
        default: "FIT manufacturer \(id)"
        }
    }
}
