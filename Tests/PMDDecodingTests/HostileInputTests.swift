import TestSupport
import Testing
@testable import PMDDecoding

@Suite struct HostileInputTests {
    /// Valid frames (SDK vectors and own ones) with the byte offsets at which a shorter,
    /// still-valid frame ends (sample boundaries of raw frames, block boundaries of delta frames).
    static var validFrames: [(name: String, bytes: [UInt8], factor: Float)] {
        [
            ("ecg raw", [0x00] + sdkTimestamp2e9 + [0x00] + hex("02 80 FF 02 80 00"), 1),
            ("acc raw 0", frameHeader(type: 2, timestamp: 5, frameType: 0) + hex("01 FF 7F 80 00 10"), 1),
            ("acc raw 1", [0x02] + sdkTimestamp2e9 + [0x01] + sdkAccRawType1Payload, 1),
            ("acc raw 2", frameHeader(type: 2, timestamp: 5, frameType: 2) + hex("FF FF FF 00 00 80 FF FF 7F"), 1),
            ("acc delta 0", [0x02] + sdkTimestamp2e9 + [0x80] + sdkAccCompressed0Payload, 2.44E-4),
            ("acc delta 1", hex("02 65 00 00 00 00 00 00 00 81 F1 FF 14 00 F0 03 06 01 7B 0F 08"), 1),
            ("acc delta multi", [0x02] + sdkTimestamp2e9 + [0x81] + sdkMultipleDeltasPayload, 1),
            ("ecg delta", frameHeader(type: 0, timestamp: 77, frameType: 0x80)
                + DeltaFrameWriter(channels: 1, resolutionBits: 24)
                    .encode([-8_000_000, -7_999_990, -8_000_001, 5, 4_000_000, 3_999_999], blockSizes: [2, 0, 3]), 1),
            ("ppi", hex("03 00 00 00 00 00 00 00 00 00 80 80 80 80 80 FF 00 01 00 01 00 00"), 1),
        ]
    }

    /// Every truncation either throws a PMDDecodingError or — only when the cut falls exactly
    /// on a sample/block boundary, where the shorter frame is itself well-formed — decodes to a
    /// strict prefix of the full frame's samples. Nothing traps or reads out of bounds.
    @Test func everyTruncation() throws {
        for (name, bytes, factor) in Self.validFrames {
            let full = try PMDDataFrame(bytes: bytes, factor: factor)
            var accepted = 0
            for length in 0..<bytes.count {
                let cut = Array(bytes[0..<length])
                do {
                    let partial = try PMDDataFrame(bytes: cut, factor: factor)
                    accepted += 1
                    #expect(partial.samples.count < full.samples.count, "\(name) @\(length)")
                    #expect(Self.isPrefix(partial.samples, of: full.samples), "\(name) @\(length)")
                    if !partial.header.isCompressed {
                        // raw: only whole-sample cuts are accepted
                        let sampleSize = (bytes.count - 10) / full.samples.count
                        #expect((length - 10) % sampleSize == 0, "\(name) @\(length)")
                    }
                } catch {
                    // typed: error is PMDDecodingError
                    _ = error
                }
            }
            // Raw frames: only whole-sample cuts survive; delta frames: only block-boundary cuts.
            #expect(accepted <= full.samples.count, "\(name)")
        }
    }

    static func isPrefix(_ a: PMDSamples, of b: PMDSamples) -> Bool {
        switch (a, b) {
        case (.ecg(let x), .ecg(let y)): Array(y.prefix(x.count)) == x
        case (.acc(let x), .acc(let y)): Array(y.prefix(x.count)) == x
        case (.ppi(let x), .ppi(let y)): Array(y.prefix(x.count)) == x
        default: false
        }
    }

    /// Cuts that are not on a boundary must fail, with the exact reason for a few known offsets.
    @Test func truncationReasons() {
        let d1 = hex("02 65 00 00 00 00 00 00 00 81 F1 FF 14 00 F0 03 06 01 7B 0F 08")
        #expect(throws: PMDDecodingError.truncated(.deltaBlockData(block: 0), needed: 3, available: 2)) {
            try PMDDataFrame(bytes: Array(d1.dropLast()))
        }
        #expect(throws: PMDDecodingError.truncated(.deltaBlockHeader(block: 0), needed: 2, available: 1)) {
            try PMDDataFrame(bytes: Array(d1.prefix(17)))
        }
        #expect(throws: PMDDecodingError.noSamples) { try PMDDataFrame(bytes: Array(d1.prefix(10))) }
    }

    @Test func randomBytesNeverCrash() {
        var rng = SplitMix64(seed: 0xBAD_F00D)
        let interestingTypes: [UInt8] = [0, 1, 2, 3, 5, 0x40, 0xFF]
        let interestingFrames: [UInt8] = [0, 1, 2, 3, 0x80, 0x81, 0x82, 0xFF]
        var decoded = 0
        for i in 0..<5000 {
            var bytes = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if i % 2 == 0, bytes.count >= 10 {
                bytes[0] = interestingTypes.randomElement(using: &rng)!
                bytes[9] = interestingFrames.randomElement(using: &rng)!
            }
            if let f = try? PMDDataFrame(bytes: bytes, factor: Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng))) {
                decoded += f.samples.count > 0 ? 1 : 0
            }
            _ = try? PMDControlPointIndication(bytes: bytes)
            _ = try? PMDControlPointResponse(bytes: [0xF0] + bytes)
            _ = try? PMDAvailableSettings(parameters: bytes)
            _ = try? PMDFeatures(controlPointValue: [0x0F] + bytes)
        }
        #expect(decoded > 0)
    }

    @Test func randomDeltaStreamsNeverCrash() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<3000 {
            var payload = (0..<6).map { _ in UInt8.random(in: 0...255, using: &rng) }
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                let width = UInt8.random(in: 0...40, using: &rng), count = UInt8.random(in: 0...255, using: &rng)
                payload += [width, count]
                payload += (0..<Int.random(in: 0...400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            _ = try? PMDDataFrame(bytes: frameHeader(type: 2, timestamp: 0, frameType: 0x81) + payload)
            _ = try? PMDDataFrame(bytes: frameHeader(type: 0, timestamp: 0, frameType: 0x80) + payload)
        }
    }

    @Test func scaledClamps() {
        #expect(PMDDataFrame.scaled(1000, .nan) == 0)
        #expect(PMDDataFrame.scaled(1000, .infinity) == .max)
        #expect(PMDDataFrame.scaled(-1000, .infinity) == .min)
        #expect(PMDDataFrame.scaled(Int32.max, 2) == .max)
        #expect(PMDDataFrame.scaled(-1905, 0.5) == -952)
    }
}
