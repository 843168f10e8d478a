/// Operation codes written to the PMD control point.
public enum PMDControlPointOpCode: UInt8, CaseIterable, Hashable, Sendable {
    /// Ask which settings a measurement type offers.
    case getMeasurementSettings = 1
    /// Start a measurement with chosen settings.
    case requestMeasurementStart = 2
    /// Stop a measurement.
    case stopMeasurement = 3
    /// Ask which settings are offered in SDK mode.
    case getSDKModeMeasurementSettings = 4
    /// Ask which measurements are running.
    case getMeasurementStatus = 5
    /// Ask whether SDK mode is on.
    case getSDKModeStatus = 6
    /// Offline recording trigger status.
    case getOfflineRecordingTriggerStatus = 7
    /// Set offline recording trigger mode.
    case setOfflineRecordingTriggerMode = 8
    /// Set offline recording trigger settings.
    case setOfflineRecordingTriggerSettings = 9
}

/// A request to write to the PMD control point.
public enum PMDControlPointRequest: Equatable, Hashable, Sendable {
    /// `01 type`: ask for the available settings of `type`.
    case getSettings(PMDMeasurementType)
    /// `02 type TLV…`: start `type` with `settings`.
    case start(PMDMeasurementType, PMDSettings)
    /// `03 type`: stop `type`.
    case stop(PMDMeasurementType)

    /// The op code of this request.
    public var opCode: PMDControlPointOpCode {
        switch self {
        case .getSettings: .getMeasurementSettings
        case .start: .requestMeasurementStart
        case .stop: .stopMeasurement
        }
    }

    /// The bytes to write to the control point.
    public var bytes: [UInt8] {
        switch self {
        case .getSettings(let t): [opCode.rawValue, t.rawValue]
        case .stop(let t): [opCode.rawValue, t.rawValue]
        case .start(let t, let s): [opCode.rawValue, t.rawValue] + s.encoded
        }
    }
}

/// A failure status reported by the device in a control point response
/// (names follow Polar SDK's `PmdControlPointResponseCode`).
public enum PMDControlPointError: Error, Equatable, Hashable, Sendable {
    /// 1: ERROR_INVALID_OP_CODE.
    case invalidOpCode
    /// 2: ERROR_INVALID_MEASUREMENT_TYPE.
    case invalidMeasurementType
    /// 3: ERROR_NOT_SUPPORTED.
    case notSupported
    /// 4: ERROR_INVALID_LENGTH.
    case invalidLength
    /// 5: ERROR_INVALID_PARAMETER.
    case invalidParameter
    /// 6: ERROR_ALREADY_IN_STATE (e.g. the measurement is already running).
    case alreadyInState
    /// 7: ERROR_INVALID_RESOLUTION.
    case invalidResolution
    /// 8: ERROR_INVALID_SAMPLE_RATE.
    case invalidSampleRate
    /// 9: ERROR_INVALID_RANGE.
    case invalidRange
    /// 10: ERROR_INVALID_MTU.
    case invalidMTU
    /// 11: ERROR_INVALID_NUMBER_OF_CHANNELS.
    case invalidNumberOfChannels
    /// 12: ERROR_INVALID_STATE.
    case invalidState
    /// 13: ERROR_DEVICE_IN_CHARGER.
    case deviceInCharger
    /// 14: ERROR_DISK_FULL.
    case diskFull
    /// A status code not known to this module.
    case unknown(UInt8)

    /// Maps a status byte to an error; nil for 0 (success).
    public init?(status: UInt8) {
        switch status {
        case 0: return nil
        case 1: self = .invalidOpCode
        case 2: self = .invalidMeasurementType
        case 3: self = .notSupported
        case 4: self = .invalidLength
        case 5: self = .invalidParameter
        case 6: self = .alreadyInState
        case 7: self = .invalidResolution
        case 8: self = .invalidSampleRate
        case 9: self = .invalidRange
        case 10: self = .invalidMTU
        case 11: self = .invalidNumberOfChannels
        case 12: self = .invalidState
        case 13: self = .deviceInCharger
        case 14: self = .diskFull
        default: self = .unknown(status)
        }
    }

    /// The status byte of this error.
    public var status: UInt8 {
        switch self {
        case .invalidOpCode: 1
        case .invalidMeasurementType: 2
        case .notSupported: 3
        case .invalidLength: 4
        case .invalidParameter: 5
        case .alreadyInState: 6
        case .invalidResolution: 7
        case .invalidSampleRate: 8
        case .invalidRange: 9
        case .invalidMTU: 10
        case .invalidNumberOfChannels: 11
        case .invalidState: 12
        case .deviceInCharger: 13
        case .diskFull: 14
        case .unknown(let s): s
        }
    }
}

/// A control point response indication: `F0 op type status [more [parameters…]]`.
public struct PMDControlPointResponse: Equatable, Hashable, Sendable {
    /// The response code byte; always 0xF0.
    public static let responseCode: UInt8 = 0xF0

    /// Raw op code being answered.
    public let rawOpCode: UInt8
    /// The op code being answered, nil if unknown.
    public var opCode: PMDControlPointOpCode? { PMDControlPointOpCode(rawValue: rawOpCode) }
    /// Raw measurement type byte.
    public let rawMeasurementType: UInt8
    /// The measurement type, nil if unknown.
    public var measurementType: PMDMeasurementType? { PMDMeasurementType(rawValue: rawMeasurementType) }
    /// Raw status byte (0 = success).
    public let status: UInt8
    /// The failure, or nil on success.
    public var error: PMDControlPointError? { PMDControlPointError(status: status) }
    /// True when more response parts follow (only meaningful on success).
    public let more: Bool
    /// Parameters after the `more` byte (only kept on success, as in Polar's SDK).
    public let parameters: [UInt8]

    /// Decodes a response indication.
    /// - Throws: ``PMDDecodingError/invalidResponseCode(_:)`` if byte 0 is not 0xF0,
    ///   ``PMDDecodingError/truncated(_:needed:available:)`` if shorter than 4 bytes.
    public init(bytes: [UInt8]) throws(PMDDecodingError) {
        if let first = bytes.first, first != Self.responseCode { throw .invalidResponseCode(first) }
        guard bytes.count >= 4 else {
            throw .truncated(.controlPointResponse, needed: 4, available: bytes.count)
        }
        rawOpCode = bytes[1]
        rawMeasurementType = bytes[2]
        status = bytes[3]
        if status == 0 {
            more = bytes.count > 4 && bytes[4] != 0
            parameters = bytes.count > 5 ? Array(bytes[5...]) : []
        } else {
            more = false
            parameters = []
        }
    }

    /// Throws the device's failure, if any.
    public func checkSuccess() throws(PMDControlPointError) {
        if let error { throw error }
    }

    /// Decodes ``parameters`` as a settings TLV block (get-settings response, or the
    /// factor in a start response).
    public func availableSettings() throws(PMDDecodingError) -> PMDAvailableSettings {
        try PMDAvailableSettings(parameters: parameters)
    }
}

/// Anything the device indicates on the control point.
public enum PMDControlPointIndication: Equatable, Hashable, Sendable {
    /// A response (`F0 …`) to a request.
    case response(PMDControlPointResponse)
    /// `01 types…`: the device stopped online measurements by itself; raw type bytes.
    case onlineMeasurementStopped(rawTypes: [UInt8])
    /// Some other service-to-client command, kept raw.
    case other([UInt8])

    /// Classifies and decodes an indication.
    /// - Throws: ``PMDDecodingError/truncated(_:needed:available:)`` for empty input, or
    ///   a response decoding error.
    public init(bytes: [UInt8]) throws(PMDDecodingError) {
        guard let first = bytes.first else {
            throw .truncated(.controlPointIndication, needed: 1, available: 0)
        }
        switch first {
        case PMDControlPointResponse.responseCode: self = .response(try PMDControlPointResponse(bytes: bytes))
        case 0x01: self = .onlineMeasurementStopped(rawTypes: Array(bytes.dropFirst()))
        default: self = .other(bytes)
        }
    }
}

extension PMDControlPointResponse {
    /// The response a device indicates to `opCode` for `measurementType`: success when `error`
    /// is nil, else that failure. As on the wire (and in the decoder), `more` and `parameters`
    /// are kept only on success.
    public init(
        opCode: PMDControlPointOpCode, measurementType: PMDMeasurementType, error: PMDControlPointError? = nil,
        more: Bool = false, parameters: [UInt8] = []
    ) {
        rawOpCode = opCode.rawValue
        rawMeasurementType = measurementType.rawValue
        status = error?.status ?? 0
        self.more = status == 0 && more
        self.parameters = status == 0 ? parameters : []
    }

    /// The indication's bytes: `F0 op type status more`, then the parameters (none on failure;
    /// a failure's `more` byte is 0, as in the device responses Polar's SDK tests with).
    public var bytes: [UInt8] {
        [Self.responseCode, rawOpCode, rawMeasurementType, status, more ? 1 : 0] + parameters
    }
}
