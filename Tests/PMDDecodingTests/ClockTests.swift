import TestSupport
import Testing
@testable import PMDDecoding

@Suite struct ClockTests {
    @Test func epochConversion() {
        #expect(PMDClock.unixNanoseconds(polarNanoseconds: 0) == 946_684_800_000_000_000)
        // BlePmdClientTest.kt `process ecg data` timestamp 946833049921875000 ns after 2000-01-01.
        #expect(PMDClock.unixNanoseconds(polarNanoseconds: 946_833_049_921_875_000) == 1_893_517_849_921_875_000)
        #expect(PMDClock.unixNanoseconds(polarNanoseconds: .max) == nil)
        #expect(PMDClock.polarNanoseconds(unixNanoseconds: 946_684_800_000_000_001) == 1)
        #expect(PMDClock.polarNanoseconds(unixNanoseconds: 0) == nil)
    }

    @Test func firstFrameUsesNominalRate() {
        var t = PMDSampleTimer(nominalSampleRate: 130)
        let times = t.sampleTimes(frameTimestamp: 1_000_000_000, sampleCount: 3)
        let step = (1e9 / 130).rounded()
        #expect(times == [1_000_000_000 - UInt64((2 * 1e9 / 130).rounded()), 1_000_000_000 - UInt64(step), 1_000_000_000])
    }

    @Test func spacingFromConsecutiveFrames() {
        // Device actually samples at 100 Hz while nominal says 130 Hz: frames of 10 samples 100 ms apart.
        var t = PMDSampleTimer(nominalSampleRate: 130)
        _ = t.sampleTimes(frameTimestamp: 5_000_000_000, sampleCount: 10)
        let second = t.sampleTimes(frameTimestamp: 5_100_000_000, sampleCount: 10)
        #expect(t.lastInterval == 10_000_000)
        #expect(second.first == 5_010_000_000)
        #expect(second.last == 5_100_000_000)
        #expect(zip(second, second.dropFirst()).allSatisfy { $1 - $0 == 10_000_000 })
        // SDK check (AccDataTest.kt `process acc compressed data type 1`): previous 100, frame 101, 2 samples.
        var sdk = PMDSampleTimer(nominalSampleRate: 0)
        _ = sdk.sampleTimes(frameTimestamp: 100, sampleCount: 1)
        #expect(sdk.sampleTimes(frameTimestamp: 101, sampleCount: 2).last == 101)
        // Non-advancing timestamp falls back to the nominal rate; clamps at 0.
        var r = PMDSampleTimer(nominalSampleRate: 1)
        _ = r.sampleTimes(frameTimestamp: 10, sampleCount: 1)
        #expect(r.sampleTimes(frameTimestamp: 5, sampleCount: 2) == [0, 5])
    }

    @Test func constantOffsetRecovered() {
        var m = PMDHostTimeMapper()
        let offset: Int64 = 123_456_789_000
        for k in 0..<50 {
            let device = UInt64(k) * 100_000_000 + 7
            m.observe(deviceTimestamp: device, hostReceiveTime: PMDClock.unixNanoseconds(polarNanoseconds: device)! + offset)
        }
        #expect(m.offset == offset)
        #expect(m.hostTime(deviceTimestamp: 42) == PMDClock.unixNanoseconds(polarNanoseconds: 42)! + offset)
    }

    @Test func jitteredDelaysGiveMinimum() {
        var rng = SplitMix64(seed: 7)
        var m = PMDHostTimeMapper()
        let offset: Int64 = -5_000_000_000
        var minDelay = Int64.max
        for k in 0..<500 {
            let delay = Int64.random(in: 3_000_000...80_000_000, using: &rng)
            minDelay = min(minDelay, delay)
            let device = UInt64(k) * 73_000_000 + 1_000_000_000
            m.observe(deviceTimestamp: device, hostReceiveTime: PMDClock.unixNanoseconds(polarNanoseconds: device)! + offset + delay)
            #expect(m.offset! >= offset + minDelay)
        }
        #expect(m.offset == offset + minDelay)
        #expect(m.observationCount == 500)
        m.reset()
        #expect(m.offset == nil && m.hostTime(deviceTimestamp: 1) == nil)
    }

    @Test func ppiTimes() {
        let s = [PMDPPISample(heartRate: 60, intervalMs: 1000, errorEstimateMs: 5, flags: 6),
                 PMDPPISample(heartRate: 61, intervalMs: 980, errorEstimateMs: 5, flags: 6)]
        #expect(PMDClock.ppiSampleTimes(frameTimestamp: 10_000_000_000, samples: s) == [9_020_000_000, 10_000_000_000])
        #expect(PMDClock.ppiSampleTimes(frameTimestamp: 0, samples: s) == [0, 0])
    }
}
