/// GATT identifiers of Polar's Measurement Data (PMD) service.
public enum PMDService {
    /// The PMD service UUID.
    public static let serviceUUID = "FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8"
    /// The PMD control point characteristic (read, write, indicate).
    public static let controlPointUUID = "FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8"
    /// The PMD data characteristic (notify).
    public static let dataUUID = "FB005C82-02E7-F387-1CAD-8ACD2D8DF0C8"
}

/// A PMD measurement type, as used in control point requests and byte 0 of data frames.
public enum PMDMeasurementType: UInt8, CaseIterable, Hashable, Sendable {
    /// Electrocardiogram (Polar H10), µV.
    case ecg = 0
    /// Photoplethysmography (optical sensors).
    case ppg = 1
    /// Accelerometer, mG.
    case acc = 2
    /// Peak-to-peak interval (optical sensors).
    case ppi = 3
    /// Gyroscope.
    case gyro = 5
    /// Magnetometer.
    case magnetometer = 6
    /// Skin temperature.
    case skinTemperature = 7
    /// SDK mode.
    case sdkMode = 9
    /// Location (GNSS).
    case location = 10
    /// Barometric pressure.
    case pressure = 11
    /// Temperature.
    case temperature = 12
    /// Offline recording.
    case offlineRecording = 13
    /// Offline heart rate.
    case offlineHR = 14

    /// Interprets byte 0 of a data frame; only the low 6 bits carry the type (as in
    /// Polar's SDK). Returns nil for unknown types.
    public init?(frameByte: UInt8) {
        self.init(rawValue: frameByte & 0x3F)
    }
}

/// The measurement types a device supports, read from the PMD control point.
///
/// The read value is `0x0F` followed by a little-endian bitmask in which bit *n*
/// (counting from bit 0 of the second byte) is set when measurement type *n* is
/// supported, e.g. `0F 05 00` = ECG (bit 0) and ACC (bit 2) on a Polar H10.
public struct PMDFeatures: Equatable, Hashable, Sendable {
    /// Supported types this module knows.
    public let supported: Set<PMDMeasurementType>
    /// Every set bit number, including ones with no ``PMDMeasurementType`` case.
    public let supportedRawTypes: [Int]

    /// Decodes the control point read value.
    /// - Throws: ``PMDDecodingError/invalidFeaturesHeader(_:)`` when byte 0 is not 0x0F,
    ///   ``PMDDecodingError/truncated(_:needed:available:)`` when no bitmask follows.
    public init(controlPointValue bytes: [UInt8]) throws(PMDDecodingError) {
        guard let first = bytes.first else {
            throw .truncated(.features, needed: 2, available: 0)
        }
        guard first == 0x0F else { throw .invalidFeaturesHeader(first) }
        guard bytes.count >= 2 else {
            throw .truncated(.features, needed: 2, available: bytes.count)
        }
        var raw: [Int] = []
        for (byteIndex, byte) in bytes.dropFirst().enumerated() {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 {
                raw.append(byteIndex * 8 + bit)
            }
        }
        supportedRawTypes = raw
        supported = Set(raw.compactMap { $0 <= 255 ? PMDMeasurementType(rawValue: UInt8($0)) : nil })
    }

    /// True when `type` is supported.
    public func supports(_ type: PMDMeasurementType) -> Bool { supported.contains(type) }
}
