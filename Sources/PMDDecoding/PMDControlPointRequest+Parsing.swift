extension PMDControlPointRequest {
    /// Parses the bytes a client wrote to the control point (what a trace keeps of a start
    /// or stop): `01 type`, `02 type TLV…` or `03 type`. A start's settings are read as
    /// ``PMDSettings/encoded`` writes them (`type, count, value…`, the first value of each
    /// setting kept); settings this type cannot hold (factor, security) are skipped.
    /// - Throws: ``PMDDecodingError``: too short, an op code or measurement type this module
    ///   does not know (`unsupported`), a truncated or unknown setting.
    public init(bytes: [UInt8]) throws(PMDDecodingError) {
        guard bytes.count >= 2 else {
            throw .truncated(.controlPointIndication, needed: 2, available: bytes.count)
        }
        guard let measurement = PMDMeasurementType(rawValue: bytes[1]) else {
            throw .unsupported(measurementType: bytes[1], frameType: 0)
        }
        switch PMDControlPointOpCode(rawValue: bytes[0]) {
        case .getMeasurementSettings?: self = .getSettings(measurement)
        case .stopMeasurement?: self = .stop(measurement)
        case .requestMeasurementStart?:
            self = .start(measurement, try Self.settings(in: bytes, from: 2))
        default:
            throw .unsupported(measurementType: bytes[1], frameType: bytes[0])
        }
    }

    /// The settings TLV from `start` on: each setting's first value kept, the others (and
    /// the settings a request cannot hold) stepped over.
    private static func settings(in bytes: [UInt8], from start: Int) throws(PMDDecodingError) -> PMDSettings {
        var settings = PMDSettings()
        var offset = start
        while offset < bytes.count {
            guard bytes.count - offset >= 2 else { throw .truncated(.settingHeader, needed: 2, available: bytes.count - offset) }
            guard let type = PMDSettingType(rawValue: bytes[offset]) else { throw .unknownSettingType(bytes[offset]) }
            let count = Int(bytes[offset + 1])
            offset += 2
            let length = count * type.valueSize
            guard bytes.count - offset >= length else {
                throw .truncated(.settingValues(type), needed: length, available: bytes.count - offset)
            }
            if count > 0, type.valueSize <= 8 {
                var value: UInt64 = 0
                for index in 0..<type.valueSize { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
                switch type {
                case .sampleRate: settings.sampleRate = UInt16(truncatingIfNeeded: value)
                case .resolution: settings.resolution = UInt16(truncatingIfNeeded: value)
                case .range: settings.range = UInt16(truncatingIfNeeded: value)
                case .channels: settings.channels = UInt8(truncatingIfNeeded: value)
                case .rangeMilliUnit, .factor, .security: break
                }
            }
            offset += length
        }
        return settings
    }
}
