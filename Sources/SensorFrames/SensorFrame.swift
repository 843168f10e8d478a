import Timestamps

/// The transport a frame arrived through.
public enum SensorTransport: String, Sendable, Hashable, CaseIterable, Codable {
    case ble, ant, serial, mock
    /// Frames made from a FIT file's records, in the GATT heart-rate encoding.
    case fit
}

/// What happened: a notification, a characteristic read, or a lifecycle event of the sensor.
public enum FrameKind: Sendable, Hashable {
    /// A GATT notification (or, for other transports, an unsolicited data message).
    case notify
    /// A characteristic read (for example Body Sensor Location 0x2A38 after connecting).
    case read
    /// A value hrmd wrote to the sensor, kept so that a replay knows what was asked (the
    /// settings a PMD stream was started with, which its data frames do not repeat).
    case write
    /// The sensor connected (or, for broadcast transports, was first heard).
    case connected
    /// The sensor disconnected or went quiet.
    case disconnected
    /// A lifecycle event this version does not know; kept so traces round-trip.
    case other(String)

    /// The name used in trace files (`notify`, `read`, `connected`, …).
    public var name: String {
        switch self {
        case .notify: "notify"
        case .read: "read"
        case .write: "write"
        case .connected: "connected"
        case .disconnected: "disconnected"
        case .other(let name): name
        }
    }

    /// Parses a trace-file kind name.
    public init(name: String) {
        switch name {
        case "notify": self = .notify
        case "read": self = .read
        case "write": self = .write
        case "connected": self = .connected
        case "disconnected": self = .disconnected
        default: self = .other(name)
        }
    }
}

/// A 16-bit GATT characteristic UUID, printed as lowercase hex (`2a37`).
public struct CharacteristicID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Heart Rate Measurement.
    public static let heartRateMeasurement = CharacteristicID(rawValue: 0x2A37)
    /// Body Sensor Location.
    public static let bodySensorLocation = CharacteristicID(rawValue: 0x2A38)
    /// Heart Rate Control Point.
    public static let heartRateControlPoint = CharacteristicID(rawValue: 0x2A39)
    /// Battery Level.
    public static let batteryLevel = CharacteristicID(rawValue: 0x2A19)
    /// Polar's Measurement Data (PMD) control point, vendor UUID
    /// `FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8`, named by its distinguishing 16 bits as Polar's
    /// SDK does (no Bluetooth SIG characteristic has this number).
    public static let pmdControlPoint = CharacteristicID(rawValue: 0x5C81)
    /// Polar's PMD data characteristic, vendor UUID `FB005C82-02E7-F387-1CAD-8ACD2D8DF0C8`:
    /// ECG, acceleration and PPI frames.
    public static let pmdData = CharacteristicID(rawValue: 0x5C82)

    /// Parses `2a37`, `2A37` or `0x2a37`.
    public init?(hex: String) {
        var text = hex
        guard let parsed = text.withUTF8({ CharacteristicID(hexUTF8: $0) }) else { return nil }
        self = parsed
    }

    /// Parses hex given as UTF-8 bytes, as `init?(hex:)` does.
    public init?(hexUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        var digits = bytes[...]
        if digits.starts(with: "0x".utf8) || digits.starts(with: "0X".utf8) { digits = digits.dropFirst(2) }
        guard (1...4).contains(digits.count) else { return nil }
        var value: UInt16 = 0
        for unit in digits {
            guard let digit = hexDigitValue(unit) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        self.rawValue = value
    }

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// A stable name for one sensor: a BLE address `AA:BB:CC:DD:EE:FF`, or the name a backend
/// gives (`mock-1`, `ant-12345`).
public struct SensorID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: SensorID, rhs: SensorID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One raw frame from a sensor, exactly as received: the unit that flows from every backend
/// (and every replayed trace line) into the ingest pipeline.
public struct SensorFrame: Sendable, Hashable {
    /// When the frame was received.
    public var time: Timestamp
    public var transport: SensorTransport
    public var device: SensorID
    public var kind: FrameKind
    /// For BLE, the characteristic the value belongs to; nil for lifecycle events.
    public var characteristic: CharacteristicID?
    /// The raw bytes (for ANT, the whole message from `a4` to the checksum).
    public var value: [UInt8]

    public init(
        time: Timestamp, transport: SensorTransport, device: SensorID, kind: FrameKind,
        characteristic: CharacteristicID? = nil, value: [UInt8] = []
    ) {
        self.time = time
        self.transport = transport
        self.device = device
        self.kind = kind
        self.characteristic = characteristic
        self.value = value
    }
}
