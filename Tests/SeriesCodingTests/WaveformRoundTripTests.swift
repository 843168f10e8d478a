@testable import SeriesCoding
import Testing

@Suite("Waveform chunks round-trip")
struct WaveformRoundTripTests {
    @Test("random walks of every length up to 40 and of a dozen random lengths up to 3000 round-trip")
    func randomWalks() throws {
        var signals = TestWaveforms(seed: 0x3A1C)
        for count in Array(0...40) + (0..<12).map({ _ in signals.below(3000) }) {
            for step in [1, 30, 5000, 1 << 24] {
                let samples = signals.randomWalk(count, step: step, start: Int32(signals.below(2000)) - 1000)
                let chunk = encodeWaveform(samples)
                #expect(try WaveformReader.decode(chunk) == samples, "\(count) instants, steps up to \(step)")
            }
        }
    }

    @Test("ECG-like signals of several lengths and noise levels round-trip")
    func ecg() throws {
        var signals = TestWaveforms(seed: 130)
        for count in [1, 2, 3, 12, 13, 100, 1024, 4096] {
            for noise in [0.0, 8, 40] {
                let samples = signals.ecg(count, noise: noise)
                #expect(try WaveformReader.decode(encodeWaveform(samples)) == samples, "\(count) instants, noise \(noise)")
            }
        }
    }

    @Test("an empty chunk is four bytes and declares its channels")
    func empty() throws {
        for channels in 1...WaveformFormat.maximumChannels {
            let chunk = WaveformEncoder(channels: channels).encoded()
            #expect(chunk == [SeriesFormat.version, 0x57, 0, UInt8(channels - 1) << 5])
            let reader = try WaveformReader(chunk)
            #expect(reader.channels == channels)
            #expect(reader.count == 0)
            #expect(try reader.samples().isEmpty)
        }
    }

    @Test("one instant of every channel count, with extreme samples, round-trips")
    func oneInstant() throws {
        var signals = TestWaveforms(seed: 1)
        for channels in 1...WaveformFormat.maximumChannels {
            for _ in 0..<20 {
                let instant = signals.extremes(channels)
                var encoder = WaveformEncoder(channels: channels)
                encoder.append(instant)
                #expect(encoder.count == 1)
                let reader = try WaveformReader(encoder.encoded())
                #expect(reader.count == 1)
                #expect(try reader.samples() == instant)
            }
        }
    }

    @Test("constant channels, short and long, of any value, round-trip; all-constant chunks still bound their count")
    func constants() throws {
        for value in TestWaveforms.extremeValues + [1000, -3000] {
            for count in [1, 2, 5, 1000, 70_000] {
                for channels in [1, 3] {
                    let samples = [Int32](repeating: value, count: count * channels)
                    let chunk = encodeWaveform(samples, channels: channels)
                    #expect(try WaveformReader.decode(chunk) == samples, "\(value) × \(count) × \(channels)")
                    // A reader takes every instant to cost a bit at least.
                    #expect(8 * chunk.count >= count, "\(value) × \(count) × \(channels)")
                }
            }
        }
        // A constant channel beside a varying one costs a few bytes.
        var signals = TestWaveforms(seed: 2)
        let varying = signals.randomWalk(1000, step: 50)
        let mixed = varying.flatMap { [$0, 1000] as [Int32] }
        #expect(try WaveformReader.decode(encodeWaveform(mixed, channels: 2)) == mixed)
        #expect(encodeWaveform(mixed, channels: 2).count <= encodeWaveform(varying).count + 4)
    }

    @Test("Int32.min and Int32.max alternating, every extreme after every other, and uniform noise round-trip")
    func extremes() throws {
        var signals = TestWaveforms(seed: 3)
        let alternating = (0..<1000).map { $0 % 2 == 0 ? Int32.min : .max }
        #expect(try WaveformReader.decode(encodeWaveform(alternating)) == alternating)
        let values = TestWaveforms.extremeValues
        let pairs = values.flatMap { a in values.flatMap { b in [a, b, a] } }
        #expect(try WaveformReader.decode(encodeWaveform(pairs)) == pairs)
        for count in [1, 2, 3, 4, 5, 17, 300, 2000] {
            let jumps = signals.extremes(count)
            #expect(try WaveformReader.decode(encodeWaveform(jumps)) == jumps, "extremes × \(count)")
            let noise = signals.noise(count)
            #expect(try WaveformReader.decode(encodeWaveform(noise)) == noise, "noise × \(count)")
            // A smooth signal with one wild jump in the middle.
            var spiked = signals.ecg(count)
            spiked[count / 2] = count % 2 == 0 ? .max : .min
            #expect(try WaveformReader.decode(encodeWaveform(spiked)) == spiked, "spike × \(count)")
        }
        // Noise that fills 32 bits is written verbatim: 32 bits a sample and a few bytes.
        #expect(encodeWaveform(signals.noise(1000)).count <= 4000 + 8)
    }

    @Test("three axes interleaved round-trip, appended by instant or interleaved alike")
    func threeChannels() throws {
        var signals = TestWaveforms(seed: 4)
        for count in [1, 2, 7, 100, 1024] {
            let samples = signals.acceleration(count)
            var byInstant = WaveformEncoder(channels: 3)
            for start in stride(from: 0, to: samples.count, by: 3) { byInstant.append(samples[start..<start + 3]) }
            var interleaved = WaveformEncoder(channels: 3)
            interleaved.append(interleaved: samples)
            #expect(byInstant.samples == interleaved.samples)
            #expect(byInstant.count == count)
            let chunk = interleaved.encoded()
            #expect(byInstant.encoded() == chunk)
            let reader = try WaveformReader(chunk)
            #expect(reader.channels == 3)
            #expect(reader.count == count)
            #expect(try reader.samples() == samples)
        }
        // Eight channels of different kinds at once.
        let columns = [signals.ecg(500), signals.randomWalk(500, step: 3), signals.noise(500), [Int32](repeating: 7, count: 500),
                       signals.extremes(500), signals.ecg(500, noise: 0), signals.randomWalk(500, step: 1 << 20), signals.ecg(500, noise: 200)]
        let eight = (0..<500).flatMap { instant in columns.map { $0[instant] } }
        #expect(try WaveformReader.decode(encodeWaveform(eight, channels: 8)) == eight)
    }

    @Test("an encoder resumed from its chunk holds the same samples and goes on")
    func resuming() throws {
        var signals = TestWaveforms(seed: 5)
        let samples = signals.acceleration(300)
        var encoder = try WaveformEncoder(resuming: encodeWaveform(Array(samples[..<600]), channels: 3))
        #expect(encoder.channels == 3)
        #expect(encoder.count == 200)
        encoder.append(interleaved: samples[600...])
        #expect(encoder.samples == samples)
        #expect(try WaveformReader.decode(encoder.encoded()) == samples)
        encoder.removeAll()
        #expect(encoder.isEmpty)
        #expect(encoder.encoded() == [SeriesFormat.version, 0x57, 0, 2 << 5])
    }

    @Test("every predictor the format has decodes, whether the encoder would choose it or not")
    func everyPredictor() throws {
        var signals = TestWaveforms(seed: 6)
        for samples in [signals.ecg(700), signals.randomWalk(300, step: 1 << 28), signals.extremes(50), signals.ecg(13)] {
            let column = samples.map(Int64.init)
            var predictors: [WaveformPredictor] = (0...WaveformPredictor.maximumFixedOrder).map { .fixed(order: $0) }
            predictors += [
                .linear(coefficients: [1], shift: 0), .linear(coefficients: [-32768, 32767], shift: 31),
                .linear(coefficients: [3, -3, 1], shift: 0), .linear(coefficients: (1...12).map { Int64($0 % 3) - 1 }, shift: 4),
            ]
            for predictor in predictors where predictor.order <= column.count {
                var writer = WaveformFormat.writer(count: column.count, channels: 1, capacity: 64)
                WaveformChannelPlan.predicted(column, by: predictor).write(column, to: &writer)
                #expect(try WaveformReader.decode(writer.finished()) == samples, "\(predictor), \(samples.count) samples")
            }
            for plan in [WaveformChannelPlan.verbatim(column), .constant(column[0])] {
                var writer = WaveformFormat.writer(count: 1, channels: 1, capacity: 64)
                plan.write([column[0]], to: &writer)
                #expect(try WaveformReader.decode(writer.finished()) == [samples[0]])
            }
        }
    }

    @Test("linear prediction is the integer arithmetic the format describes")
    func linearArithmetic() {
        // (3·x₋₁ − x₋₂) >> 1. Sample 1 is the lead-in (fixed order 1: 20 − 10); sample 2 is
        // predicted (60 − 10) >> 1 = 25; sample 3, (75 − 20) >> 1 = 27.
        let predictor = WaveformPredictor.linear(coefficients: [3, -1], shift: 1)
        #expect(predictor.residuals(of: [10, 20, 25, 40]).map(ZigZag.decode) == [10, 0, 13])
        // The shift rounds toward −∞: sample 2 of 0, −1, −1 is predicted −3 >> 1 = −2.
        #expect(predictor.residuals(of: [0, -1, -1]).map(ZigZag.decode) == [-1, 1])
        var buffer: [Int64] = [10, 10, 0, 13]
        predictor.restore(&buffer)
        #expect(buffer == [10, 20, 25, 40])
    }
}
