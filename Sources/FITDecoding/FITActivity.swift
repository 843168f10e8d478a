/// The heart-rate content of a FIT activity file (written by watches and bike computers from
/// chest straps).
public struct FITActivity: Sendable, Equatable {
    /// One `record` message with a valid heart rate.
    public struct HeartRateRecord: Sendable, Equatable {
        /// FIT time: seconds since 1989-12-31T00:00:00Z, or device-relative below 0x10000000.
        public var timestamp: UInt32
        /// Unix seconds, when the time is absolute or the file gives an anchor for it.
        public var unixSeconds: Int64?
        /// Beats per minute (255, FIT's "invalid", never appears here).
        public var heartRate: UInt8
    }

    /// One `device_info` message.
    public struct Device: Sendable, Equatable {
        public var deviceIndex: UInt8?
        public var deviceType: UInt8?
        public var manufacturer: UInt16?
        public var product: UInt16?
        public var serialNumber: UInt32?
        /// Software version (the field's value / 100).
        public var softwareVersion: Double?
        public var hardwareVersion: UInt8?
    }

    public var records: [HeartRateRecord] = []
    /// RR intervals in seconds from `hrv` messages, in file order.
    public var rrIntervals: [Double] = []
    public var devices: [Device] = []
    /// `file_id.time_created`, FIT time.
    public var fileCreated: UInt32?
    /// `file_id.serial_number` of the device that wrote the file.
    public var creatorSerial: UInt32?
    /// Set when the file is damaged: what went wrong. The rest holds what was read before.
    public var damage: FITError?

    /// Whether some heart-rate records have device-relative times the file gives no
    /// absolute anchor for.
    public var hasUnanchoredTimes: Bool { records.contains { $0.unixSeconds == nil } }

    public init() {}
}

/// Decodes FIT files: header and CRCs, definition and data messages in both byte orders,
/// compressed-timestamp headers, developer fields skipped.
public enum FITDecoder {
    /// FIT time 0 in Unix seconds (1989-12-31T00:00:00Z).
    public static let epochOffset: Int64 = 631_065_600
    /// FIT times below this are device-relative (seconds since the device powered on).
    public static let relativeLimit: UInt32 = 0x1000_0000

    /// Unix seconds of an absolute FIT time; nil for a device-relative one.
    public static func unixSeconds(fromFIT time: UInt32) -> Int64? {
        time >= relativeLimit ? Int64(time) + epochOffset : nil
    }

    /// Decodes a whole file; throws on any damage (bad header, CRC mismatch, truncation).
    public static func decodeActivity(_ bytes: [UInt8]) throws(FITError) -> FITActivity {
        let activity = try decodeActivityPartially(bytes)
        if let damage = activity.damage { throw damage }
        return activity
    }

    /// Decodes what can be read: after a valid header it never throws for damage, and
    /// returns what was read before it with `damage` set.
    public static func decodeActivityPartially(_ bytes: [UInt8]) throws(FITError) -> FITActivity {
        guard bytes.count >= 12 else { throw .notAFITFile }
        let headerSize = Int(bytes[0])
        guard headerSize == 12 || headerSize == 14, bytes.count >= headerSize, Array(bytes[8..<12]) == Array(".FIT".utf8) else {
            throw .notAFITFile
        }
        if headerSize == 14 {
            let stored = UInt16(bytes[12]) | UInt16(bytes[13]) << 8
            if stored != 0 && stored != FITCRC.checksum(bytes[0..<12]) { throw .headerCRCMismatch }
        }
        let dataSize = Int(UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24)
        let dataEnd = headerSize + dataSize
        var activity = FITActivity()
        var reader = FITRecordReader(bytes: bytes, start: headerSize, end: min(dataEnd, bytes.count))
        var correlation: Int64?  // absolute − relative seconds, from timestamp_correlation
        var relativeRecords: [Int] = []
        do {
            while let message = try reader.next() {
                collect(message, into: &activity, correlation: &correlation, relativeRecords: &relativeRecords)
            }
        } catch {
            activity.damage = error
        }
        if activity.damage == nil {
            if bytes.count < dataEnd + 2 {
                activity.damage = .truncated(atOffset: bytes.count)
            } else {
                let stored = UInt16(bytes[dataEnd]) | UInt16(bytes[dataEnd + 1]) << 8
                let computed = FITCRC.checksum(bytes[0..<dataEnd])
                if stored != computed { activity.damage = .fileCRCMismatch(expected: stored, actual: computed) }
            }
        }
        if let correlation {
            for index in relativeRecords {
                activity.records[index].unixSeconds = Int64(activity.records[index].timestamp) + correlation + epochOffset
            }
        }
        return activity
    }

    private static func collect(
        _ message: FITMessage, into activity: inout FITActivity, correlation: inout Int64?, relativeRecords: inout [Int]
    ) {
        switch message.global {
        case 0:  // file_id
            activity.fileCreated = message.value(4).map { UInt32(truncatingIfNeeded: $0) }
            activity.creatorSerial = message.value(3).map { UInt32(truncatingIfNeeded: $0) }
        case 20:  // record
            guard let time = message.timestamp, let heartRate = message.value(3) else { return }
            let unix = unixSeconds(fromFIT: time)
            if unix == nil { relativeRecords.append(activity.records.count) }
            activity.records.append(.init(timestamp: time, unixSeconds: unix, heartRate: UInt8(truncatingIfNeeded: heartRate)))
        case 23:  // device_info
            activity.devices.append(FITActivity.Device(
                deviceIndex: message.value(0).map { UInt8(truncatingIfNeeded: $0) },
                deviceType: message.value(1).map { UInt8(truncatingIfNeeded: $0) },
                manufacturer: message.value(2).map { UInt16(truncatingIfNeeded: $0) },
                product: message.value(4).map { UInt16(truncatingIfNeeded: $0) },
                serialNumber: message.value(3).map { UInt32(truncatingIfNeeded: $0) },
                softwareVersion: message.value(5).map { Double($0) / 100 },
                hardwareVersion: message.value(6).map { UInt8(truncatingIfNeeded: $0) }))
        case 78:  // hrv: RR times, 1/1000 s
            activity.rrIntervals.append(contentsOf: (message.fields[0] ?? []).map { Double($0) / 1000 })
        case 162:  // timestamp_correlation: timestamp (absolute) and system_timestamp (relative)
            if let absolute = message.timestamp, absolute >= relativeLimit, let system = message.value(1) {
                correlation = Int64(absolute) - Int64(system)
            }
        default:
            break
        }
    }
}
