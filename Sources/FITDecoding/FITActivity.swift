/// Heart-rate content of an activity file (as watches and bike computers write from chest
/// straps): heart-rate records, RR intervals, devices and the file's creation.
public struct FITActivity: Sendable, Equatable {
    /// One `record` message with a valid heart rate.
    public struct HeartRateRecord: Sendable, Equatable {
        /// FIT time: seconds since 1989-12-31T00:00:00Z, or device-relative below 0x10000000.
        public var timestamp: UInt32
        /// Unix seconds; nil when the time is device-relative and the file gives no
        /// `timestamp_correlation` to anchor it.
        public var unixSeconds: Int64?
        /// Beats per minute (never 255, FIT's "no value").
        public var heartRate: UInt8

        public init(timestamp: UInt32, unixSeconds: Int64?, heartRate: UInt8) {
            self.timestamp = timestamp
            self.unixSeconds = unixSeconds
            self.heartRate = heartRate
        }
    }

    /// One `device_info` message: the recording device (index 0) or one of its sensors.
    /// Fields the message lacks, or holds as FIT's "no value", are nil.
    public struct Device: Sendable, Equatable {
        /// FIT `manufacturer` (1 is Garmin).
        public var manufacturer: UInt16?
        /// Product number, the manufacturer's.
        public var product: UInt16?
        public var serialNumber: UInt32?
        /// Software version (the field's value / 100).
        public var softwareVersion: Double?
        public var hardwareVersion: UInt8?
        /// 0 for the device that wrote the file.
        public var deviceIndex: UInt8?
        /// Device type, as `sourceType` says to read it: the ANT+ device type (120 is a
        /// heart-rate monitor) for ANT and ANT+, the BLE device type (1 is heart rate) for
        /// Bluetooth Low Energy, the device's own numbering for local ones.
        public var deviceType: UInt8?
        /// FIT `source_type`: 0 ANT, 1 ANT+, 2 Bluetooth, 3 Bluetooth Low Energy, 4 Wi-Fi, 5 local.
        public var sourceType: UInt8?
        /// The ANT device number the sensor transmits with.
        public var antDeviceNumber: UInt16?
        /// FIT time of the message.
        public var timestamp: UInt32?

        public init(
            manufacturer: UInt16? = nil, product: UInt16? = nil, serialNumber: UInt32? = nil, softwareVersion: Double? = nil,
            hardwareVersion: UInt8? = nil, deviceIndex: UInt8? = nil, deviceType: UInt8? = nil, sourceType: UInt8? = nil,
            antDeviceNumber: UInt16? = nil, timestamp: UInt32? = nil
        ) {
            self.manufacturer = manufacturer
            self.product = product
            self.serialNumber = serialNumber
            self.softwareVersion = softwareVersion
            self.hardwareVersion = hardwareVersion
            self.deviceIndex = deviceIndex
            self.deviceType = deviceType
            self.sourceType = sourceType
            self.antDeviceNumber = antDeviceNumber
            self.timestamp = timestamp
        }

        /// Whether this is a heart-rate monitor: ANT+ device type 120 (from an ANT or ANT+
        /// source, or one not given), or BLE device type 1 from a Bluetooth Low Energy one.
        public var isHeartRateSensor: Bool {
            switch sourceType {
            case nil, FITProfile.SourceType.ant, FITProfile.SourceType.antPlus:
                deviceType == FITProfile.HeartRateDeviceType.ant
            case FITProfile.SourceType.bluetoothLowEnergy:
                deviceType == FITProfile.HeartRateDeviceType.bluetoothLowEnergy
            default:
                false
            }
        }
    }

    /// Heart-rate records in file order: only `record` messages with a time and a valid
    /// heart rate.
    public var records: [HeartRateRecord] = []
    /// RR intervals in seconds, from `hrv` messages, in file order (invalid entries dropped).
    public var rrIntervals: [Double] = []
    /// Every `device_info` message, in file order (devices write them more than once).
    public var devices: [Device] = []
    /// `file_id.time_created`, FIT time.
    public var fileCreated: UInt32?
    /// `file_id.type` (4 is an activity).
    public var fileType: UInt8?
    /// `file_id.manufacturer` of the device that wrote the file.
    public var creatorManufacturer: UInt16?
    /// `file_id.product` of the device that wrote the file.
    public var creatorProduct: UInt16?
    /// `file_id.serial_number` of the device that wrote the file.
    public var creatorSerial: UInt32?
    /// Set when the file is damaged: what went wrong; records hold what was read before.
    public var damage: FITError?

    public init() {}

    /// Whether some records have device-relative times the file gives no anchor for.
    public var hasUnanchoredTimes: Bool { records.contains { $0.unixSeconds == nil } }

    /// The first device that is a heart-rate monitor.
    public var heartRateSensor: Device? { devices.first { $0.isHeartRateSensor } }
}

/// Builds a `FITActivity` from data messages in file order; the first `file_id` (of
/// chained files) describes the file.
struct FITActivityCollector {
    private var activity = FITActivity()
    private var anchors = FITTimeAnchors()
    private var sawFileID = false

    mutating func add(_ message: FITMessage) {
        switch message.globalMessage {
        case FITProfile.FileID.message:
            guard !sawFileID else { return }
            sawFileID = true
            let file = FITFileID(message)
            activity.fileType = file.type
            activity.creatorManufacturer = file.manufacturer
            activity.creatorProduct = file.product
            activity.creatorSerial = file.serialNumber
            activity.fileCreated = file.timeCreated
        case FITProfile.Record.message:
            guard let (time, heartRate) = FITActivity.HeartRateRecord.fields(of: message) else { return }
            activity.records.append(.init(timestamp: time, unixSeconds: anchors.unixSeconds(of: time), heartRate: heartRate))
        case FITProfile.DeviceInfo.message:
            activity.devices.append(FITActivity.Device(message))
        case FITProfile.HRV.message:
            activity.rrIntervals += FITProfile.HRV.intervals(of: message)
        case FITProfile.TimestampCorrelation.message:
            if let (absolute, system) = FITProfile.TimestampCorrelation.times(of: message) {
                anchors.correlate(absolute: absolute, system: system)
            }
        default:
            break
        }
    }

    /// The activity, with the device-relative times before the first correlation anchored
    /// by it, and `damage` if any.
    func finish(damage: FITError?) -> FITActivity {
        var activity = activity
        for index in activity.records.indices where activity.records[index].unixSeconds == nil {
            activity.records[index].unixSeconds = FITTimeAnchors.unixSeconds(of: activity.records[index].timestamp, offset: anchors.first)
        }
        activity.damage = damage
        return activity
    }
}

/// The fields of a `file_id` message this module reads.
struct FITFileID {
    var type: UInt8?
    var manufacturer: UInt16?
    var product: UInt16?
    var serialNumber: UInt32?
    var timeCreated: UInt32?

    init(_ message: FITMessage) {
        type = message.value(FITProfile.FileID.type)
        manufacturer = message.value(FITProfile.FileID.manufacturer)
        product = message.value(FITProfile.FileID.product)
        serialNumber = message.value(FITProfile.FileID.serialNumber)
        timeCreated = message.value(FITProfile.FileID.timeCreated)
    }
}

extension FITActivity.HeartRateRecord {
    /// The time and heart rate of a `record` message, when it has both.
    static func fields(of message: FITMessage) -> (time: UInt32, heartRate: UInt8)? {
        guard let time = message.timestamp, let heartRate = message.value(FITProfile.Record.heartRate, as: UInt8.self) else {
            return nil
        }
        return (time, heartRate)
    }
}

extension FITActivity.Device {
    /// The fields of a `device_info` message.
    init(_ message: FITMessage) {
        typealias Field = FITProfile.DeviceInfo
        self.init(
            manufacturer: message.value(Field.manufacturer),
            product: message.value(Field.product),
            serialNumber: message.value(Field.serialNumber),
            softwareVersion: message.value(Field.softwareVersion, as: UInt16.self).map { Double($0) / Field.softwareVersionScale },
            hardwareVersion: message.value(Field.hardwareVersion),
            deviceIndex: message.value(Field.deviceIndex),
            deviceType: message.value(Field.deviceType),
            sourceType: message.value(Field.sourceType),
            antDeviceNumber: message.value(Field.antDeviceNumber),
            timestamp: message.timestamp)
    }
}

extension FITProfile.HRV {
    /// The valid RR intervals of an `hrv` message, in seconds.
    static func intervals(of message: FITMessage) -> [Double] {
        message.values(time).map { Double($0) / timeScale }
    }
}

extension FITProfile.TimestampCorrelation {
    /// The absolute and device-relative FIT times of a `timestamp_correlation` message, when
    /// it has both.
    static func times(of message: FITMessage) -> (absolute: UInt32, system: UInt32)? {
        guard let absolute = message.timestamp, let system = message.value(systemTimestamp, as: UInt32.self) else { return nil }
        return (absolute, system)
    }
}
