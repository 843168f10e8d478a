@testable import FITDecoding
import TestSupport
import Testing

@Suite("Synthetic FIT files")
struct SyntheticFITTests {
    let start: UInt32 = 1_100_000_000  // 2024-11-09, absolute

    @Test("big-endian definitions, compressed timestamps with rollover, developer fields skipped, 255 dropped")
    func structures() throws {
        var builder = FITBuilder()
        // record: timestamp (uint32, 0x86), heart_rate (uint8, 0x02), big endian, one developer byte pair.
        builder.define(local: 0, global: 20, bigEndian: true, fields: [(253, 4, 0x86), (3, 1, 0x02)], developer: [(0, 2, 0)])
        builder.data(local: 0, bigEndian32(start) + [70, 0xAA, 0xBB])
        builder.data(local: 0, bigEndian32(start + 1) + [255, 0, 0])  // invalid heart rate: skipped
        // Compressed: only heart_rate, 5-bit offsets; start ends in 0b...; roll over 32 s.
        builder.define(local: 1, global: 20, fields: [(3, 1, 0x02)])
        let base = start + 1
        builder.compressed(local: 1, timeOffset: UInt8((base + 2) & 0x1F), [72])
        builder.compressed(local: 1, timeOffset: UInt8((base + 40) & 0x1F), [74])  // more than 32 s later: taken as +8 mod 32
        let activity = try FITDecoder.decodeActivity(builder.file)
        #expect(activity.records.map(\.heartRate) == [70, 72, 74])
        #expect(activity.records[0].unixSeconds == Int64(start) + FITDecoder.epochOffset)
        #expect(activity.records[1].timestamp == base + 2)
        #expect(activity.records[2].timestamp == base + 8)  // the 5-bit offset cannot tell 40 s from 8 s
    }

    @Test("hrv arrays become RR intervals; invalid elements are dropped")
    func hrv() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 78, fields: [(0, 10, 0x84)])
        builder.data(local: 0, [0x20, 0x03, 0x52, 0x03, 0xFF, 0xFF, 0x84, 0x03, 0xFF, 0xFF])  // 800, 850, –, 900, –
        let activity = try FITDecoder.decodeActivity(builder.file)
        #expect(activity.rrIntervals == [0.8, 0.85, 0.9])
    }

    @Test("device-relative times are unanchored unless a timestamp_correlation gives the offset")
    func relativeTimes() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: [(253, 4, 0x86), (3, 1, 0x02)])
        builder.data(local: 0, littleEndian32(5000) + [60])
        let unanchored = try FITDecoder.decodeActivity(builder.file)
        #expect(unanchored.records.first?.unixSeconds == nil)
        #expect(unanchored.hasUnanchoredTimes)

        builder.define(local: 1, global: 162, fields: [(253, 4, 0x86), (1, 4, 0x86)])
        builder.data(local: 1, littleEndian32(start) + littleEndian32(4000))
        let anchored = try FITDecoder.decodeActivity(builder.file)
        #expect(anchored.records.first?.unixSeconds == Int64(start) + 1000 + FITDecoder.epochOffset)
        #expect(!anchored.hasUnanchoredTimes)
    }

    @Test("a data message before its definition is damage, reported with its offset")
    func undefinedLocal() throws {
        var builder = FITBuilder()
        builder.data(local: 3, [1, 2, 3])
        let activity = try FITDecoder.decodeActivityPartially(builder.file)
        #expect(activity.damage == .undefinedLocalMessage(3, atOffset: 14))
    }

    @Test("device_info fields, with the software version scaled")
    func deviceInfo() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 23, fields: [(0, 1, 0x02), (1, 1, 0x02), (2, 2, 0x84), (3, 4, 0x8C), (4, 2, 0x84), (5, 2, 0x84)])
        builder.data(local: 0, [1, 120, 1, 0, 0x39, 0x30, 0, 0, 0x05, 0x0B, 0x90, 0x01])
        let device = try #require(try FITDecoder.decodeActivity(builder.file).devices.first)
        #expect(device.deviceIndex == 1 && device.deviceType == 120 && device.manufacturer == 1)
        #expect(device.serialNumber == 12345 && device.product == 2821 && device.softwareVersion == 4.0)
    }
}
