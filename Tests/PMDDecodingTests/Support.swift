@testable import PMDDecoding
import TestSupport

/// The bytes of a hex string written with or without spaces ("0A 1b ff" or "0a1bff").
func hex(_ s: String) -> [UInt8] { [UInt8](hex: s.filter(\.isHexDigit)) }

/// A 10-byte PMD frame header.
func frameHeader(type: UInt8, timestamp: UInt64, frameType: UInt8) -> [UInt8] {
    var h: [UInt8] = [type]
    for i in 0..<8 { h.append(UInt8(truncatingIfNeeded: timestamp >> (8 * UInt64(i)))) }
    h.append(frameType)
    return h
}

/// Test-only writer of delta-compressed payloads (the inverse of the decoder), written
/// from the layout description: reference sample, then blocks of
/// (bit width, count, LSB-first packed two's-complement deltas).
struct DeltaFrameWriter {
    var channels: Int
    var resolutionBits: Int

    /// Encodes channel-interleaved `samples` (count multiple of channels, ≥ 1 sample),
    /// splitting the deltas into blocks of the given sizes (each ≤ 255; sum = samples − 1).
    /// `widths`, when given, forces each block's bit width (must be wide enough).
    func encode(_ samples: [Int32], blockSizes: [Int], widths: [Int]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        let refBytes = (resolutionBits + 7) / 8
        for c in 0..<channels {
            let v = UInt32(bitPattern: samples[c])
            for b in 0..<refBytes { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(b)))) }
        }
        var sampleIndex = 1
        for (blockIndex, size) in blockSizes.enumerated() {
            var deltas: [Int32] = []
            for s in sampleIndex..<(sampleIndex + size) {
                for c in 0..<channels {
                    deltas.append(samples[s * channels + c] &- samples[(s - 1) * channels + c])
                }
            }
            let width = widths?[blockIndex] ?? max(1, deltas.map(Self.bitsNeeded).max() ?? 1)
            out.append(UInt8(width))
            out.append(UInt8(size))
            var bits: [Bool] = []
            for d in deltas {
                let u = UInt32(bitPattern: d)
                for b in 0..<width { bits.append((u >> UInt32(b)) & 1 == 1) }
            }
            var byte: UInt8 = 0
            for (i, bit) in bits.enumerated() {
                if bit { byte |= 1 << UInt8(i % 8) }
                if i % 8 == 7 { out.append(byte); byte = 0 }
            }
            if bits.count % 8 != 0 { out.append(byte) }
            sampleIndex += size
        }
        return out
    }

    /// Smallest two's-complement width holding `v`.
    static func bitsNeeded(_ v: Int32) -> Int {
        for w in 1...32 {
            let lo = -(Int64(1) << (w - 1)), hi = (Int64(1) << (w - 1)) - 1
            if Int64(v) >= lo && Int64(v) <= hi { return w }
        }
        return 32
    }
}
