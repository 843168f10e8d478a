@testable import SeriesCoding
import TestSupport

/// Waveforms of many shapes, fixed by a seed: what a chest strap's ECG and accelerometer send,
/// and what no sensor should.
struct TestWaveforms {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    mutating func unit() -> Double { Double(random.next() >> 11) * 0x1p-53 }

    /// About normal, mean 0, deviation 1 (the sum of twelve uniforms, less 6).
    mutating func normal() -> Double { (0..<12).reduce(0.0) { sum, _ in sum + unit() } - 6 }

    /// A random walk from `start` with steps up to ±`step`.
    mutating func randomWalk(_ count: Int, step: Int, start: Int32 = 0) -> [Int32] {
        var value = Int64(start)
        return (0..<count).map { _ in
            value = min(max(value + Int64(below(2 * step + 1) - step), Int64(Int32.min)), Int64(Int32.max))
            return Int32(value)
        }
    }

    /// An ECG as a chest strap records it, in microvolts at 130 Hz: beats of about 70 bpm
    /// that vary a little (a P wave, a QRS complex of 1.5 mV, a T wave), 300 µV of breathing
    /// wander and `noise` µV of noise.
    mutating func ecg(_ count: Int, noise: Double = 8) -> [Int32] {
        var samples = [Double](repeating: 0, count: count)
        var beat = Double(below(100))
        while beat < Double(count) + 60 {
            let scale = 0.9 + 0.2 * unit()
            for (offset, amplitude, halfWidth) in [(-25.0, 150.0, 6.0), (-3, -150, 2), (0, 1500, 2.5), (3, -400, 2), (40, 350, 12)] {
                let centre = beat + offset
                for index in max(0, Int(centre - halfWidth))...max(0, Int(centre + halfWidth) + 1) where index < count {
                    let d = (Double(index) - centre) / halfWidth
                    if d.magnitude < 1 { samples[index] += scale * amplitude * (1 - d * d) * (1 - d * d) }
                }
            }
            beat += 111 * (0.9 + 0.2 * unit())
        }
        // A breathing wander of 0.25 Hz as a turning phasor (no trigonometry needed).
        var (re, im) = (300.0, 0.0)
        let (cosine, sine) = (0.999_927_0, 0.012_082_7)  // a turn of 2π · 0.25 / 130
        for index in 0..<count {
            (re, im) = (re * cosine - im * sine, re * sine + im * cosine)
            samples[index] += im + noise * normal()
        }
        return samples.map { Int32($0.rounded()) }
    }

    /// Three axes of acceleration in milli-g, interleaved: gravity on z, a walk's steps, noise.
    mutating func acceleration(_ count: Int) -> [Int32] {
        var phase = 0.0
        return (0..<count).flatMap { _ in
            phase += 0.07 + 0.005 * unit()
            let step = (phase.truncatingRemainder(dividingBy: 2) - 1).magnitude  // a triangle wave
            return [
                Int32((120 * step - 60 + 5 * normal()).rounded()),
                Int32((40 * step + 5 * normal()).rounded()),
                Int32((1000 + 200 * step + 5 * normal()).rounded()),
            ]
        }
    }

    /// Uniformly random 32-bit samples.
    mutating func noise(_ count: Int) -> [Int32] {
        (0..<count).map { _ in Int32(truncatingIfNeeded: random.next()) }
    }

    /// Jumps between the extremes and their neighbours.
    mutating func extremes(_ count: Int) -> [Int32] {
        (0..<count).map { _ in Self.extremeValues[below(Self.extremeValues.count)] }
    }

    static let extremeValues: [Int32] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
}

/// The chunk of `samples` (interleaved) of `channels` channels.
func encodeWaveform(_ samples: [Int32], channels: Int = 1) -> [UInt8] {
    var encoder = WaveformEncoder(channels: channels)
    encoder.append(interleaved: samples)
    return encoder.encoded()
}
