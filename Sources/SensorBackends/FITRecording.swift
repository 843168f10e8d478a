@preconcurrency import Glibc
import FITDecoding
import SensorDecoding
import Timestamps

/// A FIT activity file as a recording: its heart-rate records become frames in the GATT
/// heart-rate encoding (transport `fit`), so they take the same decode → convert →
/// authorize → store path as live data. RR intervals from `hrv` messages ride on the record
/// frames whose second they fall in; `device_info` (the heart-rate strap's, else the
/// recording device's) becomes Device Information reads.
public struct FITRecording {
    /// The frames and problems of the file, in order.
    public let entries: [RecordingEntry]
    /// What was wrong with the file, when it was read despite damage.
    public let damage: String?

    /// Reads `path`. A damaged file is an error that says what could be read, unless
    /// `acceptingDamage`, when what was read before the damage is used.
    public init(path: String, acceptingDamage: Bool = false) throws(RecordingError) {
        try self.init(bytes: RecordingFile.bytes(ofPath: path), name: path, acceptingDamage: acceptingDamage)
    }

    /// Reads the FIT file open as `descriptor`, whole, from offset 0 (with pread: its offset
    /// does not move, and the caller still owns and closes it). `name` stands for the file in
    /// messages. Damage is treated as by `init(path:acceptingDamage:)`.
    public init(descriptor: Int32, name: String, acceptingDamage: Bool = false) throws(RecordingError) {
        try self.init(bytes: RecordingFile.bytes(ofDescriptor: descriptor, name: name), name: name, acceptingDamage: acceptingDamage)
    }

    /// Decodes the bytes of a FIT file; `name` stands for it in messages.
    public init(bytes: [UInt8], name: String, acceptingDamage: Bool = false) throws(RecordingError) {
        let activity: FITActivity
        do {
            activity = try FITDecoder.decodeActivityPartially(bytes)
        } catch {
            throw .damaged(path: name, reason: "\(error)")
        }
        if let damage = activity.damage, !acceptingDamage {
            throw .damaged(
                path: name,
                reason: "\(damage); \(activity.records.count) heart-rate records were read before it (store them with --accept-damaged)")
        }
        damage = activity.damage.map { "\($0)" }
        entries = Self.entries(of: activity)
    }

    private static func entries(of activity: FITActivity) -> [RecordingEntry] {
        let strap = activity.devices.first { $0.deviceType == 120 } ?? activity.devices.first { $0.deviceIndex == 0 }
        let serial = strap?.serialNumber ?? activity.creatorSerial
        let device = SensorID(serial.map { "fit-\($0)" } ?? "fit")
        let timed = activity.records.compactMap { record in record.unixSeconds.map { (Timestamp(microsecondsSinceEpoch: $0 * 1_000_000), record) } }
        var entries: [RecordingEntry] = []
        let unanchored = activity.records.count - timed.count
        if unanchored > 0 {
            entries.append(.unusable(reason: "\(unanchored) heart-rate records have device-relative times and the file gives no absolute time for them; they are not stored"))
        }
        guard let first = timed.first?.0 else { return entries }
        func frame(_ kind: FrameKind, _ characteristic: CharacteristicID? = nil, _ value: [UInt8] = [], at time: Timestamp) -> SensorFrame {
            SensorFrame(time: time, transport: .fit, device: device, kind: kind, characteristic: characteristic, value: value)
        }
        entries.append(.frame(frame(.connected, at: first), line: 0))
        for (field, text) in deviceInformation(strap) {
            entries.append(.frame(frame(.read, field.characteristic, Array(text.utf8), at: first), line: 0))
        }
        // Beats placed from the first record on; each record frame carries the beats that
        // ended since the previous one.
        var beatEnd = first.secondsSinceEpoch
        var beats = activity.rrIntervals.makeIterator()
        var pending = beats.next()
        for (time, record) in timed {
            var intervals: [UInt16] = []
            while let interval = pending, beatEnd + interval <= time.secondsSinceEpoch {
                beatEnd += interval
                if interval > 0, interval < 64 { intervals.append(UInt16((interval * 1024).rounded())) }
                pending = beats.next()
            }
            let measurement = HeartRateMeasurement(heartRate: UInt16(record.heartRate), rrIntervals: intervals)
            entries.append(.frame(frame(.notify, .heartRateMeasurement, measurement.encoded(), at: time), line: 0))
        }
        return entries
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
