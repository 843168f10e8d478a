import TestSupport
import FITDecoding
import Testing

/// Files built here, one structure at a time.
@Suite("Synthetic FIT files")
struct FITSyntheticTests {
    typealias Field = FITBuilder.Field
    /// 2024-11-09T10:13:20Z in FIT time; its low five bits are 0.
    let start: UInt32 = 1_100_000_000
    let recordFields: [Field] = [.timestamp, .uint8(3)]

    func unix(_ fit: UInt32) -> Int64 { Int64(fit) + 631_065_600 }

    @Test("big-endian definitions read as the little-endian ones do")
    func bigEndian() throws {
        func file(bigEndian: Bool) -> [UInt8] {
            let u16 = bigEndian ? be16 : le16
            let u32 = bigEndian ? be32 : le32
            var builder = FITBuilder()
            builder.define(local: 0, global: 20, bigEndian: bigEndian, fields: recordFields)
            builder.data(local: 0, u32(start) + [71])
            builder.define(
                local: 1, global: 23, bigEndian: bigEndian,
                fields: [.uint8(0), .uint8(1), .uint16(2), .uint32z(3), .uint16(4), .uint16(5), .uint16z(21), .enumeration(25)])
            builder.data(local: 1, [2, 120] + u16(1) + u32(0x0102_0304) + u16(2821) + u16(412) + u16(0xABCD) + [1])
            builder.define(local: 2, global: 78, bigEndian: bigEndian, fields: [.uint16(0, count: 2)])
            builder.data(local: 2, u16(1000) + u16(1024))
            return builder.file()
        }
        let big = file(bigEndian: true)
        #expect(big[15...17] == [0, 1, 0] && big[18] == 20, "global number 20 written big endian")
        let activity = try FITDecoder.decodeActivity(big)
        #expect(activity == (try FITDecoder.decodeActivity(file(bigEndian: false))))
        #expect(activity.records == [.init(timestamp: start, unixSeconds: unix(start), heartRate: 71)])
        #expect(activity.rrIntervals == [1.0, 1.024])
        let device = try #require(activity.devices.first)
        #expect(device.deviceIndex == 2 && device.deviceType == 120 && device.manufacturer == 1)
        #expect(device.serialNumber == 0x0102_0304 && device.product == 2821 && device.softwareVersion == 4.12)
        #expect(device.antDeviceNumber == 0xABCD && device.sourceType == 1 && device.isHeartRateSensor)
    }

    @Test("compressed-timestamp headers count on from the last full timestamp, rolling over every 32 s")
    func compressedTimestamps() throws {
        var builder = FITBuilder()
        let base = start + 28  // low five bits: 28
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(base) + [60])
        builder.define(local: 1, global: 20, fields: [.uint8(3)])
        builder.compressed(local: 1, timeOffset: 30, [61])  // base + 2
        builder.compressed(local: 1, timeOffset: 3, [62])  // rolled over: base + 7
        builder.compressed(local: 1, timeOffset: 3, [63])  // same second
        builder.compressed(local: 1, timeOffset: 2, [64])  // rolled over again: base + 38
        builder.data(local: 0, le32(base + 100) + [65])  // a full timestamp resets the count
        builder.compressed(local: 1, timeOffset: (28 + 101) & 0x1F, [66])  // base + 101
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.records.map(\.heartRate) == [60, 61, 62, 63, 64, 65, 66])
        #expect(activity.records.map(\.timestamp) == [0, 2, 7, 7, 38, 100, 101].map { base + $0 })
        #expect(activity.records.map(\.unixSeconds) == [0, 2, 7, 7, 38, 100, 101].map { unix(base + $0) })
    }

    @Test("a compressed header before any full timestamp has no time: its record is skipped")
    func compressedWithoutBase() throws {
        var builder = FITBuilder()
        builder.define(local: 2, global: 20, fields: [.uint8(3)])
        builder.compressed(local: 2, timeOffset: 5, [70])
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(start) + [71])
        builder.compressed(local: 2, timeOffset: 5, [72])
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.records.map(\.heartRate) == [71, 72])
        #expect(activity.records.last?.timestamp == start + 5)
    }

    @Test("developer fields are skipped by their sizes")
    func developerFields() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 207, fields: [.uint8(3)])  // developer_data_id: ignored
        builder.data(local: 0, [0])
        builder.define(
            local: 1, global: 20, fields: recordFields,
            developerFields: [Field(number: 0, size: 2, baseType: 0), Field(number: 1, size: 3, baseType: 0)])
        // The developer bytes look like a definition header and a data header: they must not be read as records.
        builder.data(local: 1, le32(start) + [80] + [0x41, 0x00] + [0x01, 0xFF, 0x02])
        builder.data(local: 1, le32(start + 1) + [81] + [0, 0, 0, 0, 0])
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.records.map(\.heartRate) == [80, 81])
        #expect(activity.records.map(\.timestamp) == [start, start + 1])
    }

    @Test("heart_rate 255 (no value), and records without a heart rate or a time, are skipped")
    func invalidHeartRate() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(start) + [255])
        builder.data(local: 0, le32(start + 1) + [90])
        builder.data(local: 0, le32(0xFFFF_FFFF) + [91])  // timestamp with no value: no time
        builder.define(local: 1, global: 20, fields: [.timestamp, Field(number: 4, size: 1, baseType: 0x02)])  // cadence only
        builder.data(local: 1, le32(start + 2) + [85])
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.records == [.init(timestamp: start + 1, unixSeconds: unix(start + 1), heartRate: 90)])
    }

    @Test("device-relative times decode, with no Unix time when nothing anchors them")
    func deviceRelative() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(5000) + [60])
        builder.data(local: 0, le32(0x0FFF_FFFF) + [61])
        builder.data(local: 0, le32(start) + [62])  // absolute: from a GPS fix on
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.records.map(\.timestamp) == [5000, 0x0FFF_FFFF, start])
        #expect(activity.records.map(\.unixSeconds) == [nil, nil, unix(start)])
        #expect(activity.hasUnanchoredTimes)
        #expect(activity.damage == nil)
    }

    @Test("timestamp_correlation anchors device-relative times, from where it stands (the first also before)")
    func correlated() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.define(local: 1, global: 162, fields: [.timestamp, .uint32(1)])
        builder.data(local: 0, le32(900) + [60])
        builder.data(local: 1, le32(start) + le32(1000))  // system time 1000 was `start`
        builder.data(local: 0, le32(1010) + [61])
        builder.data(local: 1, le32(start + 50) + le32(1030))  // the clock was set 20 s on
        builder.data(local: 0, le32(1040) + [62])
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.records.map(\.unixSeconds) == [unix(start - 100), unix(start + 10), unix(start + 60)])
        #expect(activity.records.map(\.timestamp) == [900, 1010, 1040])
        #expect(!activity.hasUnanchoredTimes)
    }

    @Test("hrv arrays become RR intervals in seconds, without their no-value padding")
    func hrv() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 78, fields: [.uint16(0, count: 5)])
        builder.data(local: 0, le16(800) + le16(850) + le16(0xFFFF) + le16(0xFFFF) + le16(0xFFFF))
        builder.data(local: 0, le16(900) + le16(0xFFFF) + le16(1200) + le16(0xFFFF) + le16(0xFFFF))
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.rrIntervals == [0.8, 0.85, 0.9, 1.2])
    }

    @Test("heart-rate sensors by source type: ANT+ 120, BLE 1; a local device 120 is not one")
    func heartRateSensors() {
        #expect(FITActivity.Device(deviceType: 120, sourceType: 1).isHeartRateSensor)
        #expect(FITActivity.Device(deviceType: 120, sourceType: 0).isHeartRateSensor)
        #expect(FITActivity.Device(deviceType: 120).isHeartRateSensor)
        #expect(FITActivity.Device(deviceType: 1, sourceType: 3).isHeartRateSensor)
        #expect(!FITActivity.Device(deviceType: 120, sourceType: 5).isHeartRateSensor)
        #expect(!FITActivity.Device(deviceType: 1, sourceType: 1).isHeartRateSensor)
        #expect(!FITActivity.Device().isHeartRateSensor)
    }

    @Test("a corrupted file CRC: strict decoding throws both CRCs, partial keeps every record")
    func corruptedCRC() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        for second in 0..<3 { builder.data(local: 0, le32(start + UInt32(second)) + [UInt8(100 + second)]) }
        var bytes = builder.file()
        let good = UInt16(bytes[bytes.count - 2]) | UInt16(bytes[bytes.count - 1]) << 8
        bytes[bytes.count - 1] ^= 0x40
        let mismatch = FITError.fileCRCMismatch(expected: good ^ 0x4000, actual: good)
        #expect(throws: mismatch) { try FITDecoder.decodeActivity(bytes) }
        let partial = try FITDecoder.decodeActivityPartially(bytes)
        #expect(partial.damage == mismatch)
        #expect(partial.records.map(\.heartRate) == [100, 101, 102])
    }

    @Test("headers: 12 bytes, a CRC of 0, extra bytes are fine; a wrong header CRC is not")
    func headers() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(start) + [77])
        for file in [builder.file(headerSize: 12), builder.file(headerCRC: 0), builder.file(headerSize: 16)] {
            #expect(try FITDecoder.decodeActivity(file).records.map(\.heartRate) == [77])
        }
        #expect(try FITFileHeader(builder.file(headerSize: 12)).crc == nil)
        #expect(try FITFileHeader(builder.file(headerCRC: 0)).crc == nil)
        #expect(try FITFileHeader(builder.file(headerSize: 16)).size == 16)
        let wrong = builder.file(headerCRC: 0x1234)
        #expect(throws: FITError.headerCRCMismatch) { try FITDecoder.decodeActivity(wrong) }
        #expect(throws: FITError.headerCRCMismatch) { try FITDecoder.decodeActivityPartially(wrong) }
    }

    @Test("bytes that are not a FIT file")
    func notFIT() {
        var fitWithoutSignature = FITBuilder().file()
        fitWithoutSignature[11] = UInt8(ascii: "X")
        var headerSize13 = FITBuilder().file(headerSize: 12)
        headerSize13[0] = 13
        var headerSize10 = FITBuilder().file(headerSize: 12)
        headerSize10[0] = 10
        let cases: [[UInt8]] = [
            [], Array("{\"format\":\"hrmd-trace\"}\n".utf8), Array(FITBuilder().file().prefix(11)), fitWithoutSignature,
            headerSize13, headerSize10,
        ]
        for bytes in cases {
            #expect(throws: FITError.notAFITFile) { try FITDecoder.decodeActivity(bytes) }
            #expect(throws: FITError.notAFITFile) { try FITDecoder.decodeActivityPartially(bytes) }
        }
    }

    @Test("a data message with no definition is damage at its offset; what came before is kept")
    func undefinedLocalMessage() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(start) + [70])  // header 14 + definition 12: bytes 26..<32
        builder.data(local: 3, [1, 2, 3])
        builder.data(local: 0, le32(start + 1) + [71])
        let bytes = builder.file()
        #expect(throws: FITError.undefinedLocalMessage(3, atOffset: 32)) { try FITDecoder.decodeActivity(bytes) }
        let partial = try FITDecoder.decodeActivityPartially(bytes)
        #expect(partial.damage == .undefinedLocalMessage(3, atOffset: 32))
        #expect(partial.records.map(\.heartRate) == [70])
    }

    @Test("a definition with an architecture other than 0 or 1 is malformed")
    func malformedDefinition() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.raw([0x41, 0, 7, 20, 0, 0])
        let partial = try FITDecoder.decodeActivityPartially(builder.file())
        #expect(partial.damage == .malformedDefinition(atOffset: 26))
    }

    @Test("odd field sizes read as no value, size 0 is nothing, and neither shifts later fields")
    func oddFieldSizes() throws {
        var builder = FITBuilder()
        builder.define(
            local: 0, global: 20,
            fields: [.timestamp, Field(number: 2, size: 3, baseType: 0x84), Field(number: 5, size: 0, baseType: 0x86), .uint8(3)])
        builder.data(local: 0, le32(start) + [1, 2, 3] + [88])
        builder.define(local: 1, global: 20, fields: [Field(number: 253, size: 3, baseType: 0x86), .uint8(3)])
        builder.data(local: 1, [1, 2, 3, 89])  // a 3-byte timestamp is none: skipped
        let activity = try FITDecoder.decodeActivity(builder.file())
        #expect(activity.records.map(\.heartRate) == [88])
    }

    @Test("a record running past the data size the header announces is truncation there")
    func recordPastDataSize() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: recordFields)
        builder.data(local: 0, le32(start) + [70])
        builder.data(local: 0, le32(start + 1) + [71])
        let bytes = builder.file(dataSize: UInt32(builder.records.count - 2))
        let dataEnd = 14 + builder.records.count - 2
        let partial = try FITDecoder.decodeActivityPartially(bytes)
        #expect(partial.damage == .truncated(atOffset: dataEnd))
        #expect(partial.records.map(\.heartRate) == [70])
    }

    @Test("chained files are read one after the other; the first file_id describes them")
    func chained() throws {
        func file(created: UInt32, heartRate: UInt8, at time: UInt32) -> [UInt8] {
            var builder = FITBuilder()
            builder.define(local: 0, global: 0, fields: [.enumeration(0), .uint32(4)])
            builder.data(local: 0, [4] + le32(created))
            builder.define(local: 0, global: 20, fields: recordFields)  // redefines local 0
            builder.data(local: 0, le32(time) + [heartRate])
            return builder.file()
        }
        let first = file(created: start, heartRate: 70, at: start + 1)
        let second = file(created: start + 10, heartRate: 71, at: start + 11)
        let activity = try FITDecoder.decodeActivity(first + second)
        #expect(activity.records.map(\.heartRate) == [70, 71])
        #expect(activity.fileCreated == start && activity.fileType == 4)

        let trailing = first + [0, 0, 0]
        #expect(throws: FITError.unexpectedTrailingBytes(atOffset: first.count)) { try FITDecoder.decodeActivity(trailing) }
        #expect(try FITDecoder.decodeActivityPartially(trailing).records.map(\.heartRate) == [70])

        var badSecond = second
        badSecond[badSecond.count - 1] ^= 1
        let partial = try FITDecoder.decodeActivityPartially(first + badSecond)
        #expect(partial.records.map(\.heartRate) == [70, 71])
        guard case .fileCRCMismatch = partial.damage else {
            Issue.record("expected a CRC mismatch, got \(String(describing: partial.damage))")
            return
        }
    }

    @Test("FIT time to Unix time, and the device-relative limit")
    func unixSeconds() {
        #expect(FITDecoder.unixSeconds(fromFIT: 0) == nil)
        #expect(FITDecoder.unixSeconds(fromFIT: 0x0FFF_FFFF) == nil)
        #expect(FITDecoder.unixSeconds(fromFIT: 0x1000_0000) == 899_501_056)  // 0x10000000 + 631065600
        #expect(FITDecoder.unixSeconds(fromFIT: 866_218_162) == 1_497_283_762)  // 2017-06-12T16:09:22Z
        #expect(FITDecoder.unixSeconds(fromFIT: .max) == Int64(UInt32.max) + 631_065_600)
    }

    @Test("error descriptions are one line and say where")
    func descriptions() {
        let errors: [FITError] = [
            .notAFITFile, .headerCRCMismatch, .fileCRCMismatch(expected: 0x00AB, actual: 0xBEEF), .truncated(atOffset: 768),
            .undefinedLocalMessage(3, atOffset: 31), .malformedDefinition(atOffset: 26), .unexpectedTrailingBytes(atOffset: 99),
        ]
        for error in errors {
            #expect(!error.description.isEmpty && !error.description.contains("\n"))
        }
        #expect(FITError.fileCRCMismatch(expected: 0x00AB, actual: 0xBEEF).description.contains("0x00AB"))
        #expect(FITError.truncated(atOffset: 768).description.contains("768"))
        #expect(FITError.undefinedLocalMessage(3, atOffset: 31).description.contains("31"))
        #expect(FITError.unexpectedTrailingBytes(atOffset: 99).description.contains("99"))
    }
}
