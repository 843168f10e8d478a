/// A setting type in the PMD settings TLV (`type, count, count × value`).
public enum PMDSettingType: UInt8, CaseIterable, Hashable, Sendable {
    /// Sample rate in Hz (uint16 LE).
    case sampleRate = 0
    /// Resolution in bits (uint16 LE).
    case resolution = 1
    /// Range, e.g. ±G for ACC (uint16 LE).
    case range = 2
    /// Range in milli-units (int32 LE).
    case rangeMilliUnit = 3
    /// Number of channels (uint8).
    case channels = 4
    /// Conversion factor (IEEE-754 float32 LE); only in responses.
    case factor = 5
    /// Security key material (16 bytes); only in responses.
    case security = 6

    /// Size in bytes of one value of this setting.
    public var valueSize: Int {
        switch self {
        case .sampleRate, .resolution, .range: 2
        case .rangeMilliUnit, .factor: 4
        case .channels: 1
        case .security: 16
        }
    }
}

/// The settings chosen for a start-measurement request.
///
/// Each present value is encoded as `type, 0x01, value` (uint16 LE, channels uint8),
/// in ascending setting-type order.
public struct PMDSettings: Equatable, Hashable, Sendable {
    /// Sample rate in Hz.
    public var sampleRate: UInt16?
    /// Resolution in bits.
    public var resolution: UInt16?
    /// Range (e.g. 2, 4, 8 G for ACC).
    public var range: UInt16?
    /// Number of channels.
    public var channels: UInt8?

    /// Creates a settings selection; nil values are omitted from the request.
    public init(sampleRate: UInt16? = nil, resolution: UInt16? = nil, range: UInt16? = nil, channels: UInt8? = nil) {
        self.sampleRate = sampleRate
        self.resolution = resolution
        self.range = range
        self.channels = channels
    }

    /// Polar H10 ECG: 130 Hz, 14 bit.
    public static let h10ECG = PMDSettings(sampleRate: 130, resolution: 14)
    /// Polar H10 ACC: 200 Hz, 16 bit, ±8 G.
    public static let h10ACC = PMDSettings(sampleRate: 200, resolution: 16, range: 8)

    /// The TLV bytes of these settings.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        func put16(_ type: PMDSettingType, _ v: UInt16?) {
            guard let v else { return }
            out += [type.rawValue, 1, UInt8(v & 0xFF), UInt8(v >> 8)]
        }
        put16(.sampleRate, sampleRate)
        put16(.resolution, resolution)
        put16(.range, range)
        if let channels { out += [PMDSettingType.channels.rawValue, 1, channels] }
        return out
    }
}

/// The values a device offers for each setting, decoded from a get-settings response
/// (or the factor reported in a start response).
public struct PMDAvailableSettings: Equatable, Hashable, Sendable {
    /// Offered sample rates in Hz.
    public var sampleRates: [UInt16] = []
    /// Offered resolutions in bits.
    public var resolutions: [UInt16] = []
    /// Offered ranges.
    public var ranges: [UInt16] = []
    /// Offered ranges in milli-units.
    public var rangesMilliUnit: [Int32] = []
    /// Offered channel counts.
    public var channels: [UInt8] = []
    /// Conversion factors (float32).
    public var factors: [Float] = []
    /// Security values (16 bytes each).
    public var security: [[UInt8]] = []
    /// The setting types that appeared in the block, in order.
    public var presentTypes: [PMDSettingType] = []

    /// Creates an empty value.
    public init() {}

    /// Decodes a settings TLV block (`type, count, count × value` repeated).
    ///
    /// As in Polar's SDK a block of 0 or 1 bytes is treated as empty.
    /// - Throws: ``PMDDecodingError/unknownSettingType(_:)`` for an unknown type, or
    ///   ``PMDDecodingError/truncated(_:needed:available:)`` when values are cut short.
    public init(parameters bytes: [UInt8]) throws(PMDDecodingError) {
        if bytes.count <= 1 { return }
        var reader = ByteReader(bytes)
        while !reader.isAtEnd {
            try reader.require(2, .settingHeader)
            let rawType = try reader.readUInt8(.settingHeader)
            guard let type = PMDSettingType(rawValue: rawType) else { throw .unknownSettingType(rawType) }
            let count = Int(try reader.readUInt8(.settingHeader))
            try reader.require(count * type.valueSize, .settingValues(type))
            if !presentTypes.contains(type) { presentTypes.append(type) }
            for _ in 0..<count {
                let field = PMDField.settingValues(type)
                switch type {
                case .sampleRate: sampleRates.append(UInt16(try reader.readUnsigned(2, field)))
                case .resolution: resolutions.append(UInt16(try reader.readUnsigned(2, field)))
                case .range: ranges.append(UInt16(try reader.readUnsigned(2, field)))
                case .rangeMilliUnit: rangesMilliUnit.append(try reader.readSigned(4, field))
                case .channels: channels.append(try reader.readUInt8(field))
                case .factor: factors.append(Float(bitPattern: UInt32(try reader.readUnsigned(4, field))))
                case .security: security.append(try reader.readBytes(16, field))
                }
            }
        }
    }
}
