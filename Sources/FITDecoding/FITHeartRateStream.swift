import ByteSources

/// What a first pass over a FIT file learns, keeping a few numbers whatever the file's
/// length, so that its heart rate can be streamed in a second pass (`FITHeartRateRecords`,
/// `FITRRIntervals`): how many heart-rate records it holds and how many of them have no
/// absolute time, the first time, the device that measured, and the damage.
public struct FITHeartRateSummary: Sendable, Equatable {
    /// `record` messages with a time and a valid heart rate.
    public private(set) var recordCount = 0
    /// Records with a device-relative time the file gives no `timestamp_correlation` for:
    /// they cannot be placed in time.
    public private(set) var unanchoredCount = 0
    /// Unix seconds of the first record that has an absolute time (or one anchored).
    public private(set) var firstUnixSeconds: Int64?
    /// The first `device_info` of a heart-rate strap (ANT+ device type 120).
    public private(set) var strap: FITActivity.Device?
    /// The first `device_info` of the device that wrote the file (device index 0).
    public private(set) var recorder: FITActivity.Device?
    /// `file_id.serial_number` of the device that wrote the file.
    public private(set) var creatorSerial: UInt32?
    /// The file's sessions, laps and timer events (those before any damage).
    public private(set) var sessions = FITSessions()
    /// What was wrong with the file; the records counted are those before it.
    public private(set) var damage: FITError?
    /// Absolute − system FIT time of the file's first `timestamp_correlation`.
    var firstCorrelation: Int64?

    /// Reads `source` through. Throws only when it does not start with a valid FIT header.
    public init(scanning source: ByteSource) throws(FITError) {
        var walk = try FITMessageWalk(source)
        var anchors = FITTimeAnchors()
        var sawFileID = false
        /// The first record's time, and its Unix seconds through the correlation in force then.
        var firstRecord: (time: UInt32, unixSeconds: Int64?)?
        while let message = walk.next() {
            switch message.globalMessage {
            case FITProfile.FileID.message where !sawFileID:
                sawFileID = true
                creatorSerial = FITFileID(message).serialNumber
            case FITProfile.Record.message:
                guard let (time, _) = FITActivity.HeartRateRecord.fields(of: message) else { break }
                recordCount += 1
                if firstRecord == nil { firstRecord = (time, anchors.unixSeconds(of: time)) }
                if FITDecoder.unixSeconds(fromFIT: time) == nil {
                    unanchoredCount += 1
                } else if firstUnixSeconds == nil {
                    firstUnixSeconds = FITDecoder.unixSeconds(fromFIT: time)
                }
            case FITProfile.DeviceInfo.message where strap == nil || recorder == nil:
                let device = FITActivity.Device(message)
                if strap == nil, device.deviceType == FITProfile.HeartRateDeviceType.ant { strap = device }
                if recorder == nil, device.deviceIndex == 0 { recorder = device }
            case FITProfile.TimestampCorrelation.message:
                if let (absolute, system) = FITProfile.TimestampCorrelation.times(of: message) {
                    anchors.correlate(absolute: absolute, system: system)
                }
            case FITProfile.Session.message, FITProfile.Lap.message, FITProfile.Event.message:
                sessions.add(message)
            default:
                break
            }
        }
        damage = walk.damage
        firstCorrelation = anchors.first
        if let firstCorrelation, let firstRecord {
            // Every record is placed in time, the first through the correlation before it,
            // else through the file's first.
            unanchoredCount = 0
            firstUnixSeconds = firstRecord.unixSeconds
                ?? FITTimeAnchors.unixSeconds(of: firstRecord.time, offset: firstCorrelation)
        }
    }
}

/// The heart-rate records of a FIT file, in file order, each with its Unix time (nil when
/// it is device-relative and the file gives no anchor), read front to back from `source`
/// (a second pass, after `FITHeartRateSummary`). Stops where the file is damaged.
public struct FITHeartRateRecords: Sequence, IteratorProtocol {
    private var walk: FITMessageWalk
    private var anchors: FITTimeAnchors

    /// Bytes of the source read so far.
    public var bytesRead: Int { walk.bytesRead }

    /// The records of `source`, whose first pass gave `summary`.
    public init(_ source: ByteSource, summary: FITHeartRateSummary) throws(FITError) {
        walk = try FITMessageWalk(source)
        anchors = FITTimeAnchors(first: summary.firstCorrelation)
    }

    public mutating func next() -> FITActivity.HeartRateRecord? {
        while let message = walk.next() {
            switch message.globalMessage {
            case FITProfile.Record.message:
                guard let (time, heartRate) = FITActivity.HeartRateRecord.fields(of: message) else { continue }
                return .init(timestamp: time, unixSeconds: anchors.unixSeconds(of: time), heartRate: heartRate)
            case FITProfile.TimestampCorrelation.message:
                if let (absolute, system) = FITProfile.TimestampCorrelation.times(of: message) {
                    anchors.correlate(absolute: absolute, system: system)
                }
            default:
                continue
            }
        }
        return nil
    }
}

/// The RR intervals of a FIT file's `hrv` messages, in seconds and file order (invalid
/// entries dropped), read front to back from `source`. Stops where the file is damaged.
public struct FITRRIntervals: Sequence, IteratorProtocol {
    private var walk: FITMessageWalk
    /// The intervals of the message being handed out, from `nextInterval` on.
    private var intervals: [Double] = []
    private var nextInterval = 0

    public init(_ source: ByteSource) throws(FITError) {
        walk = try FITMessageWalk(source)
    }

    public mutating func next() -> Double? {
        while nextInterval == intervals.count {
            guard let message = walk.next() else { return nil }
            guard message.globalMessage == FITProfile.HRV.message else { continue }
            intervals = FITProfile.HRV.intervals(of: message)
            nextInterval = 0
        }
        defer { nextInterval += 1 }
        return intervals[nextInterval]
    }
}
