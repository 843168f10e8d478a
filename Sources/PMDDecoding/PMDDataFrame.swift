/// The 10-byte header of a PMD data notification.
///
/// `type (1) | timestamp (8, uint64 LE, ns since 2000-01-01T00:00:00Z, time of the LAST
/// sample in the frame) | frame type (1: bit 7 = delta-compressed, bits 0–6 = frame type)`.
public struct PMDFrameHeader: Equatable, Hashable, Sendable {
    /// Header length in bytes.
    public static let size = 10

    /// Byte 0 as received.
    public let rawMeasurementType: UInt8
    /// The measurement type (low 6 bits of byte 0), nil if unknown.
    public var measurementType: PMDMeasurementType? { PMDMeasurementType(frameByte: rawMeasurementType) }
    /// Device time of the frame's last sample, ns since the Polar epoch (2000-01-01 UTC).
    public let timestamp: UInt64
    /// Byte 9 as received.
    public let rawFrameType: UInt8
    /// True when the payload is delta-compressed (bit 7 of byte 9).
    public var isCompressed: Bool { rawFrameType & 0x80 != 0 }
    /// The frame type number (bits 0–6 of byte 9).
    public var frameType: UInt8 { rawFrameType & 0x7F }

    /// Decodes the header from the start of a notification.
    /// - Throws: ``PMDDecodingError/truncated(_:needed:available:)`` if shorter than 10 bytes.
    public init(bytes: [UInt8]) throws(PMDDecodingError) {
        var reader = ByteReader(bytes)
        try reader.require(Self.size, .frameHeader)
        rawMeasurementType = try reader.readUInt8(.frameHeader)
        timestamp = try reader.readUnsigned(8, .frameHeader)
        rawFrameType = try reader.readUInt8(.frameHeader)
    }
}

/// One accelerometer sample in mG.
public struct PMDAccSample: Equatable, Hashable, Sendable {
    /// X axis, mG.
    public var x: Int32
    /// Y axis, mG.
    public var y: Int32
    /// Z axis, mG.
    public var z: Int32
    /// Creates a sample.
    public init(x: Int32, y: Int32, z: Int32) { self.x = x; self.y = y; self.z = z }
}

/// One peak-to-peak interval sample (PPI frame type 0, 6 bytes).
public struct PMDPPISample: Equatable, Hashable, Sendable {
    /// Heart rate, bpm.
    public var heartRate: UInt8
    /// Peak-to-peak interval, ms.
    public var intervalMs: UInt16
    /// Error estimate of the interval, ms.
    public var errorEstimateMs: UInt16
    /// Flags byte: bit 0 blocker, bit 1 skin contact, bit 2 skin contact supported.
    public var flags: UInt8
    /// Bit 0: the interval is unreliable (movement blocker).
    public var blocker: Bool { flags & 0x01 != 0 }
    /// Bit 1: skin contact detected.
    public var skinContact: Bool { flags & 0x02 != 0 }
    /// Bit 2: the sensor supports skin contact detection.
    public var skinContactSupported: Bool { flags & 0x04 != 0 }
    /// Creates a sample.
    public init(heartRate: UInt8, intervalMs: UInt16, errorEstimateMs: UInt16, flags: UInt8) {
        self.heartRate = heartRate; self.intervalMs = intervalMs
        self.errorEstimateMs = errorEstimateMs; self.flags = flags
    }
}

/// Decoded samples of one frame, oldest first.
public enum PMDSamples: Equatable, Hashable, Sendable {
    /// ECG samples in µV.
    case ecg([Int32])
    /// Accelerometer samples in mG.
    case acc([PMDAccSample])
    /// PPI samples.
    case ppi([PMDPPISample])

    /// Number of samples.
    public var count: Int {
        switch self {
        case .ecg(let s): s.count
        case .acc(let s): s.count
        case .ppi(let s): s.count
        }
    }
}

/// A decoded PMD data notification (characteristic FB005C82-…).
///
/// Supported: ECG raw 0x00 (int24 µV) and delta 0x80 (int24 reference, 1 channel);
/// ACC raw 0x00/0x01/0x02 (int8/int16/int24 × 3), delta 0x81 (int16 × 3) and delta 0x80
/// (int16 × 3 in units of `factor` G, converted to mG); PPI raw 0x00.
public struct PMDDataFrame: Equatable, Hashable, Sendable {
    /// The frame header.
    public let header: PMDFrameHeader
    /// The samples, oldest first; the last one is at `header.timestamp`.
    public let samples: PMDSamples

    /// Decodes one notification.
    ///
    /// - Parameters:
    ///   - bytes: the whole notification value.
    ///   - factor: the ACC conversion factor reported by the device in the start response
    ///     (``PMDSettingType/factor``); 1.0 when none was reported. Only used for
    ///     compressed ACC frames, as in Polar's SDK. Non-finite results are clamped
    ///     (NaN gives 0).
    /// - Throws: ``PMDDecodingError``; never traps on any input.
    public init(bytes: [UInt8], factor: Float = 1.0) throws(PMDDecodingError) {
        let header = try PMDFrameHeader(bytes: bytes)
        self.header = header
        let start = PMDFrameHeader.size
        let unsupported = PMDDecodingError.unsupported(measurementType: header.rawMeasurementType,
                                                      frameType: header.rawFrameType)
        guard let type = header.measurementType else { throw unsupported }
        switch (type, header.rawFrameType) {
        case (.ecg, 0x00):
            samples = .ecg(try Self.raw(bytes, start, channels: 1, bytesPerValue: 3).map { $0 })
        case (.ecg, 0x80):
            samples = .ecg(try Self.delta(bytes, start, channels: 1, resolution: 24))
        case (.acc, 0x00), (.acc, 0x01), (.acc, 0x02):
            let values = try Self.raw(bytes, start, channels: 3, bytesPerValue: Int(header.rawFrameType) + 1)
            samples = .acc(Self.triples(values, scale: nil))
        case (.acc, 0x80):
            let values = try Self.delta(bytes, start, channels: 3, resolution: 16)
            samples = .acc(Self.triples(values, scale: factor * 1000))
        case (.acc, 0x81):
            let values = try Self.delta(bytes, start, channels: 3, resolution: 16)
            samples = .acc(Self.triples(values, scale: factor == 1.0 ? nil : factor))
        case (.ppi, 0x00):
            samples = .ppi(try Self.ppi(bytes, start))
        default:
            throw unsupported
        }
    }

    /// Reads fixed-size signed little-endian values; payload must be whole samples.
    private static func raw(_ bytes: [UInt8], _ start: Int, channels: Int, bytesPerValue: Int) throws(PMDDecodingError) -> [Int32] {
        let payload = bytes.count - start
        let sampleSize = channels * bytesPerValue
        guard payload > 0 else { throw .noSamples }
        guard payload % sampleSize == 0 else {
            throw .partialSample(payloadLength: payload, sampleSize: sampleSize)
        }
        var reader = ByteReader(bytes, offset: start)
        var out: [Int32] = []
        out.reserveCapacity(payload / bytesPerValue)
        var index = 0
        while !reader.isAtEnd {
            for _ in 0..<channels {
                out.append(try reader.readSigned(bytesPerValue, .sample(index: index)))
            }
            index += 1
        }
        return out
    }

    private static func delta(_ bytes: [UInt8], _ start: Int, channels: Int, resolution: Int) throws(PMDDecodingError) -> [Int32] {
        guard bytes.count > start else { throw .noSamples }
        return try PMDDeltaCodec.decode(bytes, from: start, channels: channels, resolutionBits: resolution)
    }

    private static func triples(_ v: [Int32], scale: Float?) -> [PMDAccSample] {
        var out: [PMDAccSample] = []
        out.reserveCapacity(v.count / 3)
        var i = 0
        while i + 2 < v.count {
            if let scale {
                out.append(PMDAccSample(x: scaled(v[i], scale), y: scaled(v[i + 1], scale), z: scaled(v[i + 2], scale)))
            } else {
                out.append(PMDAccSample(x: v[i], y: v[i + 1], z: v[i + 2]))
            }
            i += 3
        }
        return out
    }

    /// `Int32(Float(value) * scale)` truncating toward zero like the SDK, clamped, NaN → 0.
    static func scaled(_ value: Int32, _ scale: Float) -> Int32 {
        let product = Float(value) * scale
        if product.isNaN { return 0 }
        if product >= 2_147_483_520 { return Int32.max }   // largest Float below 2^31
        if product <= -2_147_483_648 { return Int32.min }
        return Int32(product)
    }

    private static func ppi(_ bytes: [UInt8], _ start: Int) throws(PMDDecodingError) -> [PMDPPISample] {
        let payload = bytes.count - start
        guard payload > 0 else { throw .noSamples }
        guard payload % 6 == 0 else { throw .partialSample(payloadLength: payload, sampleSize: 6) }
        var reader = ByteReader(bytes, offset: start)
        var out: [PMDPPISample] = []
        var index = 0
        while !reader.isAtEnd {
            let f = PMDField.sample(index: index)
            let hr = try reader.readUInt8(f)
            let pp = UInt16(try reader.readUnsigned(2, f))
            let err = UInt16(try reader.readUnsigned(2, f))
            let flags = try reader.readUInt8(f)
            out.append(PMDPPISample(heartRate: hr, intervalMs: pp, errorEstimateMs: err, flags: flags))
            index += 1
        }
        return out
    }
}
