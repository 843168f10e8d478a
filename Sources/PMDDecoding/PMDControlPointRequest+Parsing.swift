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
            var reader = ByteReader(bytes, offset: 2)
            var settings = PMDSettings()
            while reader.remaining > 0 {
                let rawType = try reader.readUInt8(.settingHeader)
                guard let type = PMDSettingType(rawValue: rawType) else { throw .unknownSettingType(rawType) }
                let count = Int(try reader.readUInt8(.settingHeader))
                for index in 0..<count {
                    guard type.valueSize <= 8 else {
                        _ = try reader.readBytes(type.valueSize, .settingValues(type))
                        continue
                    }
                    let value = try reader.readUnsigned(type.valueSize, .settingValues(type))
                    guard index == 0 else { continue }
                    switch type {
                    case .sampleRate: settings.sampleRate = UInt16(truncatingIfNeeded: value)
                    case .resolution: settings.resolution = UInt16(truncatingIfNeeded: value)
                    case .range: settings.range = UInt16(truncatingIfNeeded: value)
                    case .channels: settings.channels = UInt8(truncatingIfNeeded: value)
                    case .rangeMilliUnit, .factor, .security: break
                    }
                }
            }
            self = .start(measurement, settings)
        default:
            throw .unsupported(measurementType: bytes[1], frameType: bytes[0])
        }
    }
}
