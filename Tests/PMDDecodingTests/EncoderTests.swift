import TestSupport
import Testing
@testable import PMDDecoding

@Suite struct EncoderTests {
    static let int24 = (min: Int32(-8_388_608), max: Int32(8_388_607))
    static let int16 = (min: Int32(Int16.min), max: Int32(Int16.max))

    /// A random walk of `count` values within `range`, steps of up to `step`.
    static func walk(_ rng: inout SplitMix64, count: Int, range: ClosedRange<Int32>, step: Int32) -> [Int32] {
        var value = Int32.random(in: range, using: &rng)
        var out: [Int32] = []
        for _ in 0..<count {
            out.append(value)
            value = min(max(value &+ Int32.random(in: -step...step, using: &rng), range.lowerBound), range.upperBound)
        }
        return out
    }

    static func accSamples(_ rng: inout SplitMix64, count: Int, step: Int32) -> [PMDAccSample] {
        let range = int16.min...int16.max
        let x = walk(&rng, count: count, range: range, step: step)
        let y = walk(&rng, count: count, range: range, step: step)
        let z = walk(&rng, count: count, range: range, step: step)
        return (0..<count).map { PMDAccSample(x: x[$0], y: y[$0], z: z[$0]) }
    }

    /// The sample counts of the delta blocks of a delta payload (after the 10-byte header).
    static func blockCounts(_ frame: [UInt8], channels: Int, referenceBytes: Int) -> [Int] {
        var offset = PMDFrameHeader.size + channels * referenceBytes
        var counts: [Int] = []
        while offset + 2 <= frame.count {
            let width = Int(frame[offset]), count = Int(frame[offset + 1])
            counts.append(count)
            offset += 2 + (width * count * channels + 7) / 8
        }
        return counts
    }

    @Test func headerRoundTrip() throws {
        for timestamp: UInt64 in [0, 1, 2_000_000_000, 946_833_049_921_875_000, .max] {
            let header = PMDFrameHeader(measurementType: .acc, timestamp: timestamp, rawFrameType: 0x81)
            #expect(header.bytes.count == PMDFrameHeader.size)
            #expect(try PMDFrameHeader(bytes: header.bytes) == header)
        }
        // The SDK's ECG header (BlePmdClientTest.kt `process ecg data`), rebuilt.
        let sdk = PMDFrameHeader(measurementType: .ecg, timestamp: 946_833_049_921_875_000, rawFrameType: 3)
        #expect(sdk.bytes == hex("00 38 6C 31 72 A4 D3 23 0D 03"))
    }

    @Test func ecgRawRoundTrip() throws {
        var rng = SplitMix64(seed: 0xEC9)
        let cases: [[Int32]] = [
            [0], [Self.int24.min], [Self.int24.max], [-1, 1, Self.int24.min, Self.int24.max, 0],
            Self.walk(&rng, count: 73, range: -3000...3000, step: 400),
            Self.walk(&rng, count: 73, range: Self.int24.min...Self.int24.max, step: 9_000_000),
        ]
        for samples in cases {
            let bytes = try PMDFrameEncoder.ecgFrame(samples, timestamp: 123_456_789)
            #expect(bytes.count == PMDFrameHeader.size + 3 * samples.count)
            let frame = try PMDDataFrame(bytes: bytes)
            #expect(frame.header.measurementType == .ecg)
            #expect(frame.header.rawFrameType == 0x00)
            #expect(frame.header.timestamp == 123_456_789)
            #expect(frame.samples == .ecg(samples))
        }
        // 73 samples fill an H10's notification at ATT MTU 232 exactly (3 bytes of ATT header).
        #expect(try PMDFrameEncoder.ecgFrame(Array(repeating: 5, count: 73), timestamp: 0).count == 232 - 3)
        // The SDK's raw ECG vector (EcgDataTest.kt), rebuilt byte for byte.
        #expect(try PMDFrameEncoder.ecgFrame([-32766, 32770], timestamp: 2_000_000_000)
                == [0x00] + sdkTimestamp2e9 + [0x00] + hex("02 80 FF 02 80 00"))
    }

    @Test func ecgDeltaRoundTrip() throws {
        var rng = SplitMix64(seed: 0xDE17A)
        var cases: [[Int32]] = [
            [0], [Self.int24.min], [Self.int24.max],
            // Full-scale swings: 25-bit deltas.
            [Self.int24.min, Self.int24.max, Self.int24.min, 0, Self.int24.max, -1],
            Array(repeating: 42, count: 73),   // every delta 0: 1-bit blocks
        ]
        cases.append(Self.walk(&rng, count: 73, range: -3000...3000, step: 400))
        for _ in 0..<50 {
            cases.append(Self.walk(&rng, count: Int.random(in: 1...400, using: &rng), range: Self.int24.min...Self.int24.max,
                                   step: Int32(1) << Int32.random(in: 0...24, using: &rng)))
        }
        for samples in cases {
            for blockSize in [1, 7, 16, 72, 255] {
                let bytes = try PMDFrameEncoder.ecgFrame(samples, timestamp: 77, compression: .delta(samplesPerBlock: blockSize))
                let frame = try PMDDataFrame(bytes: bytes)
                #expect(frame.header.rawFrameType == 0x80 && frame.header.isCompressed && frame.header.frameType == 0)
                #expect(frame.header.timestamp == 77)
                #expect(frame.samples == .ecg(samples), "\(samples.count) samples in blocks of \(blockSize)")
                // Blocks of the requested size, the last one holding the rest.
                let deltas = samples.count - 1
                var expected = Array(repeating: blockSize, count: deltas / blockSize)
                if deltas % blockSize != 0 { expected.append(deltas % blockSize) }
                #expect(Self.blockCounts(bytes, channels: 1, referenceBytes: 3) == expected)
            }
        }
    }

    @Test func accRawRoundTrip() throws {
        var rng = SplitMix64(seed: 0xACC1)
        let extremes = [
            PMDAccSample(x: Self.int16.min, y: Self.int16.max, z: 0),
            PMDAccSample(x: Self.int16.max, y: Self.int16.min, z: -1),
        ]
        let cases: [[PMDAccSample]] = [
            [PMDAccSample(x: -9, y: -1, z: 999)], extremes,
            Self.accSamples(&rng, count: 36, step: 50), Self.accSamples(&rng, count: 73, step: 30_000),
        ]
        for samples in cases {
            let bytes = try PMDFrameEncoder.accelerationFrame(samples, timestamp: 9)
            #expect(bytes.count == PMDFrameHeader.size + 6 * samples.count)
            let frame = try PMDDataFrame(bytes: bytes)
            #expect(frame.header.measurementType == .acc && frame.header.rawFrameType == 0x01 && frame.header.timestamp == 9)
            #expect(frame.samples == .acc(samples))
        }
        // The SDK's raw type 1 vector (AccDataTest.kt), re-encoded from its decoded samples, is the same bytes.
        let sdk = [0x02] + sdkTimestamp2e9 + [0x01] + sdkAccRawType1Payload
        guard case .acc(let decoded) = try PMDDataFrame(bytes: sdk).samples else { Issue.record("not acc"); return }
        #expect(try PMDFrameEncoder.accelerationFrame(decoded, timestamp: 2_000_000_000) == sdk)
        #expect(sdk.count == 232 - 3 - 3)   // 36 samples: what fits at ATT MTU 232
    }

    @Test func accDeltaRoundTrip() throws {
        var rng = SplitMix64(seed: 0xACCDE)
        var cases: [[PMDAccSample]] = [
            [PMDAccSample(x: -15, y: 20, z: 1008)],
            [PMDAccSample(x: Self.int16.min, y: Self.int16.max, z: 0), PMDAccSample(x: Self.int16.max, y: Self.int16.min, z: -1),
             PMDAccSample(x: Self.int16.min, y: Self.int16.max, z: 0)],
        ]
        cases.append(Self.accSamples(&rng, count: 36, step: 20))
        cases.append(Self.accSamples(&rng, count: 73, step: 2000))
        for _ in 0..<50 {
            cases.append(Self.accSamples(&rng, count: Int.random(in: 1...300, using: &rng), step: Int32.random(in: 1...40_000, using: &rng)))
        }
        for samples in cases {
            for blockSize in [1, 10, 35, 255] {
                let bytes = try PMDFrameEncoder.accelerationFrame(samples, timestamp: 101, compression: .delta(samplesPerBlock: blockSize))
                let frame = try PMDDataFrame(bytes: bytes)
                #expect(frame.header.rawFrameType == 0x81 && frame.header.timestamp == 101)
                #expect(frame.samples == .acc(samples), "\(samples.count) samples in blocks of \(blockSize)")
                let deltas = samples.count - 1
                #expect(Self.blockCounts(bytes, channels: 3, referenceBytes: 2).reduce(0, +) == deltas)
                #expect(Self.blockCounts(bytes, channels: 3, referenceBytes: 2).count == (deltas + blockSize - 1) / blockSize)
            }
        }
    }

    @Test func deltaPayloadMatchesTheTestWriter() throws {
        // The test suite's own writer (minimal widths) and the encoder agree byte for byte.
        var rng = SplitMix64(seed: 0x3217E)
        for _ in 0..<100 {
            let samples = Self.accSamples(&rng, count: Int.random(in: 1...200, using: &rng), step: Int32.random(in: 1...5000, using: &rng))
            let blockSize = Int.random(in: 1...255, using: &rng)
            var sizes = Array(repeating: blockSize, count: (samples.count - 1) / blockSize)
            if (samples.count - 1) % blockSize != 0 { sizes.append((samples.count - 1) % blockSize) }
            let interleaved = samples.flatMap { [$0.x, $0.y, $0.z] }
            let mine = try PMDFrameEncoder.accelerationFrame(samples, timestamp: 0, compression: .delta(samplesPerBlock: blockSize))
            #expect(Array(mine.dropFirst(PMDFrameHeader.size))
                    == DeltaFrameWriter(channels: 3, resolutionBits: 16).encode(interleaved, blockSizes: sizes))
        }
    }

    @Test func bitWidths() {
        #expect(PMDDeltaCodec.bitWidth(of: 0) == 1)
        #expect(PMDDeltaCodec.bitWidth(of: -1) == 1)
        #expect(PMDDeltaCodec.bitWidth(of: 1) == 2)
        #expect(PMDDeltaCodec.bitWidth(of: -2) == 2)
        #expect(PMDDeltaCodec.bitWidth(of: 127) == 8 && PMDDeltaCodec.bitWidth(of: -128) == 8 && PMDDeltaCodec.bitWidth(of: 128) == 9)
        #expect(PMDDeltaCodec.bitWidth(of: .max) == 32 && PMDDeltaCodec.bitWidth(of: .min) == 32)
        for value: Int32 in [0, 1, -1, 5, -77, 1 << 20, -(1 << 24), .max, .min] {
            #expect(PMDDeltaCodec.bitWidth(of: value) == DeltaFrameWriter.bitsNeeded(value))
        }
    }

    @Test func errors() {
        #expect(throws: PMDEncodingError.noSamples) { try PMDFrameEncoder.ecgFrame([], timestamp: 0) }
        #expect(throws: PMDEncodingError.noSamples) { try PMDFrameEncoder.accelerationFrame([], timestamp: 0, compression: .deltaInLargestBlocks) }
        #expect(throws: PMDEncodingError.valueOutOfRange(sample: 2, value: 8_388_608, bits: 24)) {
            try PMDFrameEncoder.ecgFrame([0, 1, 8_388_608], timestamp: 0)
        }
        #expect(throws: PMDEncodingError.valueOutOfRange(sample: 0, value: -8_388_609, bits: 24)) {
            try PMDFrameEncoder.ecgFrame([-8_388_609], timestamp: 0, compression: .deltaInLargestBlocks)
        }
        #expect(throws: PMDEncodingError.valueOutOfRange(sample: 1, value: 32768, bits: 16)) {
            try PMDFrameEncoder.accelerationFrame([PMDAccSample(x: 0, y: 0, z: 0), PMDAccSample(x: 1, y: 32768, z: 0)], timestamp: 0)
        }
        for size in [0, -1, 256] {
            #expect(throws: PMDEncodingError.invalidBlockSize(size)) {
                try PMDFrameEncoder.ecgFrame([1, 2], timestamp: 0, compression: .delta(samplesPerBlock: size))
            }
        }
    }

    @Test func samplesPerFrame() {
        #expect(PMDFrameEncoder.rawSamplesPerFrame(of: .ecg, mtu: 232) == 73)
        #expect(PMDFrameEncoder.rawSamplesPerFrame(of: .acc, mtu: 232) == 36)
        #expect(PMDFrameEncoder.rawSamplesPerFrame(of: .ecg, mtu: 23) == 3)
        #expect(PMDFrameEncoder.rawSamplesPerFrame(of: .ppi, mtu: 232) == 0)
        #expect(PMDFrameEncoder.rawSamplesPerFrame(of: .acc, mtu: 5) == 0)
    }

    @Test func controlPointResponses() throws {
        let ecgStarted = PMDControlPointResponse(opCode: .requestMeasurementStart, measurementType: .ecg)
        #expect(ecgStarted.bytes == hex("F0 02 00 00 00"))
        #expect(try PMDControlPointResponse(bytes: ecgStarted.bytes) == ecgStarted)
        let withParameters = PMDControlPointResponse(
            opCode: .getMeasurementSettings, measurementType: .acc, more: true, parameters: [0xFF, 0xFF, 0xFF])
        #expect(try PMDControlPointResponse(bytes: withParameters.bytes) == withParameters)
        // SDK vectors (BlePmdClientControlPointResponseTest.kt), rebuilt.
        #expect(PMDControlPointResponse(opCode: .getMeasurementSettings, measurementType: .acc, parameters: [0xFF, 0xFF, 0xFF]).bytes
                == hex("F0 01 02 00 00 FF FF FF"))
        let failed = PMDControlPointResponse(
            opCode: .getMeasurementSettings, measurementType: .magnetometer, error: .invalidResolution, more: true, parameters: [1])
        #expect(failed.bytes == hex("F0 01 06 07 00"))   // the SDK's `failing control point response` vector
        #expect(failed.more == false && failed.parameters.isEmpty)
        #expect(try PMDControlPointResponse(bytes: failed.bytes) == failed)
        #expect(try PMDControlPointIndication(bytes: ecgStarted.bytes) == .response(ecgStarted))
    }
}
