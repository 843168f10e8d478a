@testable import SeriesCoding
import Testing

/// What waveform chunks cost, with some margin over what the encoder achieves, so that a
/// change that loses compression shows.
@Suite("Waveform chunk sizes")
struct WaveformSizeTests {
    /// Bits per sample of `samples` in chunks of `chunk` instants.
    static func bitsPerSample(_ samples: [Int32], channels: Int = 1, chunk: Int = 1024) -> Double {
        let perChunk = chunk * channels
        let bytes = stride(from: 0, to: samples.count, by: perChunk).reduce(0) { total, start in
            total + encodeWaveform(Array(samples[start..<min(start + perChunk, samples.count)]), channels: channels).count
        }
        return Double(8 * bytes) / Double(samples.count)
    }

    @Test("an ECG-like signal at 130 Hz codes in under 8 bits a sample with noise of 8 µV, under 5.75 without")
    func ecg() {
        var signals = TestWaveforms(seed: 0xECC)
        // The encoder achieves 5.1 and 7.26 (16-bit PCM would take 16).
        #expect(Self.bitsPerSample(signals.ecg(4096, noise: 0)) < 5.75)
        #expect(Self.bitsPerSample(signals.ecg(4096, noise: 8)) < 8)
    }

    @Test("three axes of acceleration code in under 5.6 bits a sample")
    func acceleration() {
        var signals = TestWaveforms(seed: 0xACC)
        // The encoder achieves 5.2.
        #expect(Self.bitsPerSample(signals.acceleration(3072), channels: 3, chunk: 3072) < 5.6)
    }

    @Test("a random walk of uniform steps of ±30 codes within 0.3 bits of their entropy (5.93)")
    func randomWalk() {
        var signals = TestWaveforms(seed: 7)
        #expect(Self.bitsPerSample(signals.randomWalk(8192, step: 30)) < 5.93 + 0.3)
    }

    @Test("a constant channel costs a few bytes beside another; a chunk of constants alone a bit an instant")
    func constants() {
        var signals = TestWaveforms(seed: 8)
        let walk = signals.randomWalk(1024, step: 30)
        let withConstant = walk.flatMap { [$0, -1234] as [Int32] }
        #expect(encodeWaveform(withConstant, channels: 2).count <= encodeWaveform(walk).count + 4)
        // Channel 0 is written verbatim, in one bit a sample, so that the count is bounded by the bytes.
        let constant = [Int32](repeating: 0, count: 1024 * 3)
        #expect(encodeWaveform(constant, channels: 3).count <= 1024 / 8 + 8)
    }

    @Test("a chunk's header is four bytes and a few bits; a constant channel 8 bits and its value's")
    func header() {
        // Version, kind, count; 3 bits of channels, 2 of type, 6 of width, none for 0.
        #expect(encodeWaveform([0]).count == 5)
        // 3 + 8 × (2 + 6 + 5) bits (9 is 18 zigzag-mapped, 5 bits): 14 bytes.
        #expect(encodeWaveform([Int32](repeating: 9, count: 8), channels: 8).count == 3 + 14)
    }
}
