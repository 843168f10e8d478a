/// How an encoded PMD data frame lays out its samples.
public enum PMDFrameCompression: Equatable, Hashable, Sendable {
    /// Fixed-size little-endian samples, as a Polar H10 sends them: frame type 0x00 for ECG
    /// (int24 µV per sample), 0x01 for acceleration (int16 mG per axis, x y z per sample).
    case raw
    /// Delta-compressed (bit 7 of the frame type set): 0x80 for ECG (an int24 reference
    /// sample), 0x81 for acceleration (int16 x y z reference, mG, no conversion factor). After
    /// the reference the deltas come in blocks of at most `samplesPerBlock` (1…255) samples,
    /// each block packed at the narrowest bit width that holds all of its deltas.
    case delta(samplesPerBlock: Int)

    /// Delta compression in blocks of up to 255 samples, the most a block header can count.
    public static let deltaInLargestBlocks = PMDFrameCompression.delta(samplesPerBlock: 255)
}

/// Why samples cannot be encoded as a PMD data frame.
public enum PMDEncodingError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// There are no samples: a frame must carry at least one (the decoder rejects empty frames).
    case noSamples
    /// Value `value` of sample `sample` (0-based) does not fit in `bits`-bit two's complement,
    /// the width the frame type stores (24 bits for ECG, 16 for acceleration).
    case valueOutOfRange(sample: Int, value: Int32, bits: Int)
    /// A delta block size outside 1…255 (a block header counts its samples in one byte).
    case invalidBlockSize(Int)

    /// One line saying what is wrong, with the numbers.
    public var description: String {
        switch self {
        case .noSamples: "a PMD frame needs at least one sample"
        case .valueOutOfRange(let sample, let value, let bits): "sample \(sample) holds \(value), which does not fit in \(bits) bits"
        case .invalidBlockSize(let size): "a delta block holds 1…255 samples, not \(size)"
        }
    }
}

/// Builds the PMD data notifications (characteristic FB005C82-…) that a Polar H10 sends: ECG
/// and acceleration frames, raw or delta-compressed, each stamped with the device time of its
/// last sample. The inverse of ``PMDDataFrame``: every frame built here decodes back to the same
/// samples and header.
public enum PMDFrameEncoder {
    /// Bits of one ECG value (raw frame type 0x00 and the delta reference sample).
    public static let ecgValueBits = 24
    /// Bits of one acceleration axis value (raw frame type 0x01 and the delta reference sample).
    public static let accelerationValueBits = 16
    /// Bytes of ATT protocol overhead in a notification (op code and handle).
    static let notificationOverhead = 3

    /// The most raw samples of `type` that fit in one notification at ATT MTU `mtu`:
    /// 73 ECG samples or 36 acceleration samples at MTU 232, which is what an H10 sends.
    /// 0 for other types or an MTU too small for the header and one sample.
    public static func rawSamplesPerFrame(of type: PMDMeasurementType, mtu: Int) -> Int {
        let sampleSize: Int
        switch type {
        case .ecg: sampleSize = ecgValueBits / 8
        case .acc: sampleSize = 3 * accelerationValueBits / 8
        default: return 0
        }
        return max(0, (mtu - notificationOverhead - PMDFrameHeader.size) / sampleSize)
    }

    /// An ECG frame (measurement type 0) of `microvolts`, oldest first, whose last sample was
    /// taken at `timestamp` (ns since 2000-01-01T00:00:00Z).
    /// - Throws: ``PMDEncodingError/noSamples`` for no samples,
    ///   ``PMDEncodingError/valueOutOfRange(sample:value:bits:)`` for a value outside int24,
    ///   ``PMDEncodingError/invalidBlockSize(_:)`` for a delta block size outside 1…255.
    public static func ecgFrame(
        _ microvolts: [Int32], timestamp: UInt64, compression: PMDFrameCompression = .raw
    ) throws(PMDEncodingError) -> [UInt8] {
        guard !microvolts.isEmpty else { throw .noSamples }
        try checkRange(microvolts, channels: 1, bits: ecgValueBits)
        switch compression {
        case .raw:
            let header = PMDFrameHeader(measurementType: .ecg, timestamp: timestamp, rawFrameType: 0x00)
            return header.bytes + littleEndian(microvolts, bytesPerValue: ecgValueBits / 8)
        case .delta(let samplesPerBlock):
            let payload = try PMDDeltaCodec.encode(
                microvolts, channels: 1, resolutionBits: ecgValueBits, samplesPerBlock: samplesPerBlock)
            return PMDFrameHeader(measurementType: .ecg, timestamp: timestamp, rawFrameType: 0x80).bytes + payload
        }
    }

    /// An acceleration frame (measurement type 2) of `samples` in mG, oldest first, whose last
    /// sample was taken at `timestamp` (ns since 2000-01-01T00:00:00Z). A decoder reads the
    /// values as mG with the default conversion factor 1.0.
    /// - Throws: ``PMDEncodingError/noSamples`` for no samples,
    ///   ``PMDEncodingError/valueOutOfRange(sample:value:bits:)`` for an axis outside int16,
    ///   ``PMDEncodingError/invalidBlockSize(_:)`` for a delta block size outside 1…255.
    public static func accelerationFrame(
        _ samples: [PMDAccSample], timestamp: UInt64, compression: PMDFrameCompression = .raw
    ) throws(PMDEncodingError) -> [UInt8] {
        guard !samples.isEmpty else { throw .noSamples }
        var values: [Int32] = []
        values.reserveCapacity(3 * samples.count)
        for sample in samples { values += [sample.x, sample.y, sample.z] }
        try checkRange(values, channels: 3, bits: accelerationValueBits)
        switch compression {
        case .raw:
            let header = PMDFrameHeader(measurementType: .acc, timestamp: timestamp, rawFrameType: 0x01)
            return header.bytes + littleEndian(values, bytesPerValue: accelerationValueBits / 8)
        case .delta(let samplesPerBlock):
            let payload = try PMDDeltaCodec.encode(
                values, channels: 3, resolutionBits: accelerationValueBits, samplesPerBlock: samplesPerBlock)
            return PMDFrameHeader(measurementType: .acc, timestamp: timestamp, rawFrameType: 0x81).bytes + payload
        }
    }

    /// Throws for the first value outside `bits`-bit two's complement.
    private static func checkRange(_ values: [Int32], channels: Int, bits: Int) throws(PMDEncodingError) {
        let lowest = -(Int64(1) << (bits - 1))
        let highest = (Int64(1) << (bits - 1)) - 1
        for (index, value) in values.enumerated() where Int64(value) < lowest || Int64(value) > highest {
            throw .valueOutOfRange(sample: index / channels, value: value, bits: bits)
        }
    }

    /// The low `bytesPerValue` bytes of each value, least significant first.
    private static func littleEndian(_ values: [Int32], bytesPerValue: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(values.count * bytesPerValue)
        for value in values {
            let bits = UInt32(bitPattern: value)
            for byte in 0..<bytesPerValue { out.append(UInt8(truncatingIfNeeded: bits >> UInt32(8 * byte))) }
        }
        return out
    }
}

extension PMDFrameHeader {
    /// A header for a frame of `measurementType` whose last sample was taken at `timestamp`
    /// (ns since 2000-01-01T00:00:00Z), with frame type byte `rawFrameType` (bit 7: delta-compressed).
    public init(measurementType: PMDMeasurementType, timestamp: UInt64, rawFrameType: UInt8) {
        self.rawMeasurementType = measurementType.rawValue
        self.timestamp = timestamp
        self.rawFrameType = rawFrameType
    }

    /// The 10 header bytes: type, timestamp (uint64 little endian), frame type.
    public var bytes: [UInt8] {
        var out: [UInt8] = [rawMeasurementType]
        for byte in 0..<8 { out.append(UInt8(truncatingIfNeeded: timestamp >> UInt64(8 * byte))) }
        out.append(rawFrameType)
        return out
    }
}
