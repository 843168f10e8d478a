import ByteSources
@testable import FITDecoding
import Testing

/// python-fitparse's files, against what python-fitparse reads from them.
@Suite("Real FIT files")
struct FITFixtureTests {
    @Test("every record's heart rate at the right UTC time", arguments: ["garmin-edge-820-bike", "garmin-fenix-5-bike"])
    func againstCSV(name: String) throws {
        let activity = try FITDecoder.decodeActivity(try Fixtures.bytes("\(name).fit"))
        let expected = try Fixtures.expectedRecords("\(name)-records.csv")
        #expect(expected.count >= 15)
        try #require(activity.records.count == expected.count)
        for (record, row) in zip(activity.records, expected) {
            #expect(record.unixSeconds == row.unixSeconds)
            #expect(record.heartRate == row.heartRate)
            #expect(Int64(record.timestamp) + FITDecoder.epochOffset == row.unixSeconds)
        }
        #expect(activity.damage == nil)
        #expect(!activity.hasUnanchoredTimes)
    }

    @Test("the Edge 820's file_id, devices (the strap among them) and hrv beats")
    func edge820() throws {
        let activity = try FITDecoder.decodeActivity(try Fixtures.bytes("garmin-edge-820-bike.fit"))
        #expect(activity.fileType == 4)  // activity
        #expect(activity.creatorManufacturer == 1)  // Garmin
        #expect(activity.creatorSerial == 3_932_942_223)
        #expect(activity.fileCreated == 866_218_215)  // 2017-06-12T16:10:15Z
        #expect(activity.devices.count == 12)  // six devices, written at the start and at the end
        #expect(activity.devices.first?.deviceIndex == 0)
        #expect(activity.devices.first?.serialNumber == 3_932_942_223)
        #expect(activity.devices.first?.softwareVersion == 7.0)
        #expect(activity.devices.first?.sourceType == 5)  // local
        let strap = try #require(activity.heartRateSensor)
        #expect(strap.deviceIndex == 3 && strap.deviceType == 120 && strap.sourceType == 1)
        #expect(strap.serialNumber == 3_945_849_289 && strap.manufacturer == 1)
        #expect(strap.timestamp == 866_218_215)
        #expect(activity.devices.filter(\.isHeartRateSensor).count == 2)
        #expect(activity.rrIntervals.count == 126)
        #expect(activity.rrIntervals.prefix(6) == [0.594, 0.588, 0.588, 0.588, 0.582, 0.582])
        #expect(activity.rrIntervals.suffix(3) == [0.521, 0.521, 0.521])
        #expect(abs(activity.rrIntervals.reduce(0, +) - 66.289) < 1e-9)
    }

    @Test("the fenix 5 wrote the file the Edge's strap was (it broadcast its heart rate)")
    func fenix5() throws {
        let activity = try FITDecoder.decodeActivity(try Fixtures.bytes("garmin-fenix-5-bike.fit"))
        #expect(activity.creatorSerial == 3_945_849_289)
        #expect(activity.fileCreated == 866_218_162)  // 2017-06-12T16:09:22Z
        #expect(activity.devices.count == 10)
        #expect(activity.heartRateSensor == nil)
        #expect(activity.rrIntervals.isEmpty)
    }

    @Test(
        "as many data messages as python-fitparse reads",
        arguments: [
            ("garmin-edge-820-bike.fit", 113), ("garmin-fenix-5-bike.fit", 143), ("activity-filecrc.fit", 22),
            ("activity-unexpected-eof.fit", 21),
        ])
    func messageCounts(name: String, count: Int) throws {
        var seen = 0
        var walk = try FITMessageWalk(ByteSource(try Fixtures.bytes(name)))
        while walk.next() != nil { seen += 1 }
        #expect(seen == count)
    }

    @Test("header and file CRCs are the FIT SDK's, and the decoder checks them")
    func crcs() throws {
        for name in ["garmin-edge-820-bike.fit", "garmin-fenix-5-bike.fit"] {
            let bytes = try Fixtures.bytes(name)
            let header = try FITFileHeader(bytes)
            #expect(header.size == 14)
            #expect(header.crc == UInt16(bytes[12]) | UInt16(bytes[13]) << 8)
            #expect(header.crc == FITCRC.checksum(bytes[0..<12]))
            #expect(14 + Int(header.dataSize) + 2 == bytes.count)
            #expect(FITCRC.checksum(bytes.dropLast(2)) == UInt16(bytes[bytes.count - 2]) | UInt16(bytes[bytes.count - 1]) << 8)
            #expect(FITCRC.checksum(bytes) == 0, "a CRC over data and its own CRC is 0")
        }
        let edge = try FITFileHeader(try Fixtures.bytes("garmin-edge-820-bike.fit"))
        #expect(edge.protocolVersion == 0x20 && edge.profileVersion == 2024)
    }

    @Test("activity-filecrc.fit: a file CRC mismatch (python-fitparse's FitCRCError), its messages all read")
    func fileCRC() throws {
        let bytes = try Fixtures.bytes("activity-filecrc.fit")
        let stored = UInt16(bytes[769]) | UInt16(bytes[770]) << 8  // 12-byte header + 757 bytes of data
        let computed = FITCRC.checksum(bytes[0..<769])
        #expect(stored != computed)
        let mismatch = FITError.fileCRCMismatch(expected: stored, actual: computed)
        #expect(throws: mismatch) { try FITDecoder.decodeActivity(bytes) }
        let partial = try FITDecoder.decodeActivityPartially(bytes)
        #expect(partial.damage == mismatch)
        // file_id as python-fitparse reads it: an activity by Dynastream's HRM1 in 2012.
        #expect(partial.fileType == 4)
        #expect(partial.creatorManufacturer == 15 && partial.creatorProduct == 1)
        #expect(partial.creatorSerial == 0x7FFF_FFFF)
        #expect(partial.fileCreated == 702_940_946)  // 2012-04-09T21:22:26Z
        #expect(partial.records.isEmpty, "its 14 records have no heart_rate")
    }

    @Test("activity-unexpected-eof.fit: strict decoding throws a truncation, partial keeps what came before")
    func unexpectedEOF() throws {
        let bytes = try Fixtures.bytes("activity-unexpected-eof.fit")
        #expect(bytes.count == 768)
        #expect(throws: FITError.truncated(atOffset: 768)) { try FITDecoder.decodeActivity(bytes) }
        let partial = try FITDecoder.decodeActivityPartially(bytes)
        #expect(partial.damage == .truncated(atOffset: 768))
        var whole = try FITDecoder.decodeActivityPartially(try Fixtures.bytes("activity-filecrc.fit"))
        whole.damage = partial.damage
        #expect(partial == whole, "the same file, less its last message")
    }

    @Test("a Garmin file cut in half: the records before the cut, and where it is")
    func cutInHalf() throws {
        let bytes = try Fixtures.bytes("garmin-fenix-5-bike.fit")
        let whole = try FITDecoder.decodeActivity(bytes)
        let cut = bytes.count / 2
        #expect(throws: FITError.truncated(atOffset: cut)) { try FITDecoder.decodeActivity(Array(bytes.prefix(cut))) }
        let partial = try FITDecoder.decodeActivityPartially(Array(bytes.prefix(cut)))
        #expect(partial.damage == .truncated(atOffset: cut))
        #expect(!partial.records.isEmpty && partial.records.count < whole.records.count)
        #expect(partial.records == Array(whole.records.prefix(partial.records.count)))
        #expect(partial.creatorSerial == whole.creatorSerial)
    }
}
