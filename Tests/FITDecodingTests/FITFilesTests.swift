import FITDecoding
import Foundation
import Testing

/// The real FIT files of python-fitparse (MIT; LICENSE-python-fitparse beside them).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// (unix seconds, heart rate) of each CSV row that has a heart rate.
    static func expectedRecords(_ name: String) throws -> [(Int64, UInt8)] {
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        return try text.split(whereSeparator: \.isNewline).dropFirst().compactMap { line in
            let columns = line.split(separator: ",", omittingEmptySubsequences: false)
            guard columns.count > 1, let heartRate = UInt8(columns[1]) else { return nil }
            return (try unixSeconds(String(columns[0])), heartRate)
        }
    }

    /// "Mon Jun 12 09:09:22 PDT 2017" → Unix seconds.
    static func unixSeconds(_ text: String) throws -> Int64 {
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let zones: [String: Int64] = ["UTC": 0, "GMT": 0, "PDT": -7, "PST": -8, "MDT": -6, "MST": -7, "CDT": -5, "CST": -6, "EDT": -4, "EST": -5, "CEST": 2, "CET": 1]
        let month = try #require(months.firstIndex(of: String(parts[1]))) + 1
        let day = try #require(Int(parts[2]))
        let clock = parts[3].split(separator: ":").compactMap { Int64($0) }
        let offset = try #require(zones[String(parts[4])])
        let year = try #require(Int(parts[5]))
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        components.timeZone = TimeZone(identifier: "UTC")
        let midnight = try #require(Calendar(identifier: .gregorian).date(from: components))
        return Int64(midnight.timeIntervalSince1970) + clock[0] * 3600 + clock[1] * 60 + clock[2] - offset * 3600
    }
}

@Suite("FIT files")
struct FITFilesTests {
    @Test("every record's heart rate at the right UTC time", arguments: ["garmin-edge-820-bike", "garmin-fenix-5-bike"])
    func againstCSV(name: String) throws {
        let activity = try FITDecoder.decodeActivity(try Fixtures.bytes("\(name).fit"))
        let expected = try Fixtures.expectedRecords("\(name)-records.csv")
        #expect(!expected.isEmpty)
        #expect(activity.records.count == expected.count)
        for (record, (seconds, heartRate)) in zip(activity.records, expected) {
            #expect(record.unixSeconds == seconds)
            #expect(record.heartRate == heartRate)
        }
        #expect(activity.damage == nil)
        #expect(!activity.devices.isEmpty)
    }

    @Test("a file whose CRC does not match (python-fitparse's invalid-CRC case) is damaged, its records still readable")
    func fileCRC() throws {
        let bytes = try Fixtures.bytes("activity-filecrc.fit")
        #expect {
            try FITDecoder.decodeActivity(bytes)
        } throws: { error in
            guard case .fileCRCMismatch = error as? FITError else { return false }
            return true
        }
        let partial = try FITDecoder.decodeActivityPartially(bytes)
        #expect(partial.fileCreated != nil, "the file_id before the damage is read")
    }

    @Test("a truncated file: strict decoding throws, partial decoding keeps what came before")
    func unexpectedEOF() throws {
        let bytes = try Fixtures.bytes("activity-unexpected-eof.fit")
        #expect {
            try FITDecoder.decodeActivity(bytes)
        } throws: { error in
            guard case .truncated = error as? FITError else { return false }
            return true
        }
        let partial = try FITDecoder.decodeActivityPartially(bytes)
        #expect(partial.damage != nil)
        let whole = try FITDecoder.decodeActivityPartially(try Fixtures.bytes("activity-filecrc.fit"))
        #expect(partial.fileCreated != nil && partial.fileCreated == whole.fileCreated)
        #expect(partial.records == Array(whole.records.prefix(partial.records.count)))
    }

    @Test("every prefix of a real file throws or returns damage, never crashes")
    func everyPrefix() throws {
        let bytes = try Fixtures.bytes("garmin-fenix-5-bike.fit")
        for length in 0..<bytes.count {
            do {
                let activity = try FITDecoder.decodeActivityPartially(Array(bytes.prefix(length)))
                #expect(activity.damage != nil, "prefix \(length) read as whole")
            } catch {
                #expect(length < 14 || error == .notAFITFile || error == .headerCRCMismatch)
            }
        }
    }

    @Test("a flipped byte is a CRC mismatch")
    func corrupted() throws {
        var bytes = try Fixtures.bytes("garmin-edge-820-bike.fit")
        bytes[bytes.count / 2] ^= 0x01
        #expect {
            try FITDecoder.decodeActivity(bytes)
        } throws: { error in
            if case .fileCRCMismatch = error as? FITError { return true }
            return (error as? FITError) != nil
        }
        #expect(throws: FITError.notAFITFile) { try FITDecoder.decodeActivity(Array("{\"format\":\"hrmd-trace\"}".utf8)) }
    }
}
