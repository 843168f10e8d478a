/// Decoder and encoder of PMD delta-compressed frame payloads. Internal; used by
/// ``PMDDataFrame`` and ``PMDFrameEncoder``.
///
/// Layout (checked against polar-ble-sdk `BlePMDClient.parseDeltaFramesAll` and its tests):
/// - reference sample: `channels` values of ceil(resolution/8) bytes each, little-endian,
///   sign-extended from `resolution` bits;
/// - then zero or more blocks: `bitWidth` (1 byte), `sampleCount` (1 byte), followed by
///   ceil(sampleCount × channels × bitWidth / 8) bytes holding sampleCount × channels
///   two's-complement deltas of `bitWidth` bits, packed LSB first (bit *k* of the stream is
///   bit k%8 of byte k/8), channel-interleaved, each added to the previous sample's channel.
///   Unused bits at the end of a block are padding.
///
/// Arithmetic wraps modulo 2³² like the SDK's `Int` arithmetic. Bit widths outside 1...32
/// are rejected (the SDK would silently produce nothing for width 0).
enum PMDDeltaCodec {
    /// Returns channel-interleaved samples (reference first); count is a multiple of `channels`.
    static func decode(_ bytes: [UInt8], from start: Int, channels: Int, resolutionBits: Int) throws(PMDDecodingError) -> [Int32] {
        precondition(channels >= 1 && resolutionBits >= 1 && resolutionBits <= 32)
        var reader = ByteReader(bytes, offset: start)
        let refBytes = (resolutionBits + 7) / 8
        try reader.require(channels * refBytes, .referenceSample)
        var out: [Int32] = []
        out.reserveCapacity(channels * 16)
        for _ in 0..<channels {
            let raw = try reader.readUnsigned(refBytes, .referenceSample)
            out.append(signExtend(raw, bits: resolutionBits))
        }
        var block = 0
        while !reader.isAtEnd {
            try reader.require(2, .deltaBlockHeader(block: block))
            let width = try reader.readUInt8(.deltaBlockHeader(block: block))
            let count = Int(try reader.readUInt8(.deltaBlockHeader(block: block)))
            guard width >= 1 && width <= 32 else { throw .invalidDeltaBitWidth(block: block, bitWidth: width) }
            let w = Int(width)
            let totalBits = count * channels * w
            let length = (totalBits + 7) / 8
            let data = try reader.readBytes(length, .deltaBlockData(block: block))
            var bit = 0
            for _ in 0..<count {
                let previous = out.count - channels
                for c in 0..<channels {
                    let delta = readBits(data, at: bit, width: w)
                    bit += w
                    out.append(out[previous + c] &+ delta)
                }
            }
            block += 1
        }
        return out
    }

    /// Reads `width` (1...32) bits LSB-first starting at bit `position`, sign-extended.
    /// Caller guarantees `position + width <= data.count * 8`.
    @inline(__always)
    static func readBits(_ data: [UInt8], at position: Int, width: Int) -> Int32 {
        var value: UInt64 = 0
        let firstByte = position >> 3
        let shift = position & 7
        let lastByte = (position + width - 1) >> 3
        var i = firstByte
        while i <= lastByte {
            value |= UInt64(data[i]) << UInt64(8 * (i - firstByte))
            i += 1
        }
        return signExtend(value >> UInt64(shift), bits: width)
    }

    /// Encodes channel-interleaved `samples` (a whole number of samples, at least one): the
    /// first sample as the reference in ceil(resolution/8)-byte little-endian values, then the
    /// deltas in blocks of up to `samplesPerBlock` samples, each at the narrowest two's-complement
    /// width (1…32 bits) that holds every delta of the block, packed LSB first. Deltas wrap modulo
    /// 2³² as the decoder's sums do, so any Int32 samples round-trip; the reference must fit in
    /// `resolutionBits` (the caller checks).
    /// - Throws: ``PMDEncodingError/invalidBlockSize(_:)`` unless `samplesPerBlock` is 1…255.
    static func encode(_ samples: [Int32], channels: Int, resolutionBits: Int, samplesPerBlock: Int) throws(PMDEncodingError) -> [UInt8] {
        precondition(channels >= 1 && resolutionBits >= 1 && resolutionBits <= 32)
        precondition(samples.count >= channels && samples.count % channels == 0)
        guard (1...255).contains(samplesPerBlock) else { throw .invalidBlockSize(samplesPerBlock) }
        let refBytes = (resolutionBits + 7) / 8
        var out: [UInt8] = []
        for value in samples[0..<channels] {
            let bits = UInt32(bitPattern: value)
            for byte in 0..<refBytes { out.append(UInt8(truncatingIfNeeded: bits >> UInt32(8 * byte))) }
        }
        let sampleCount = samples.count / channels
        var first = 1
        while first < sampleCount {
            let count = min(samplesPerBlock, sampleCount - first)
            var deltas: [Int32] = []
            deltas.reserveCapacity(count * channels)
            for index in (first * channels)..<((first + count) * channels) {
                deltas.append(samples[index] &- samples[index - channels])
            }
            let width = deltas.reduce(1) { max($0, bitWidth(of: $1)) }
            out.append(UInt8(width))
            out.append(UInt8(count))
            var pending: UInt64 = 0
            var pendingBits = 0
            let mask = (UInt64(1) << UInt64(width)) - 1
            for delta in deltas {
                pending |= (UInt64(UInt32(bitPattern: delta)) & mask) << UInt64(pendingBits)
                pendingBits += width
                while pendingBits >= 8 {
                    out.append(UInt8(truncatingIfNeeded: pending))
                    pending >>= 8
                    pendingBits -= 8
                }
            }
            if pendingBits > 0 { out.append(UInt8(truncatingIfNeeded: pending)) }
            first += count
        }
        return out
    }

    /// The narrowest two's-complement width (1…32 bits) that holds `value`.
    @inline(__always)
    static func bitWidth(of value: Int32) -> Int {
        33 - (value >= 0 ? value : ~value).leadingZeroBitCount
    }
}
