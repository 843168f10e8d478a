import Foundation
import Testing

/// The real FIT files from python-fitparse's tests (MIT; LICENSE-python-fitparse is beside
/// them in Fixtures/), with the records python-fitparse reads from the two Garmin files.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// (Unix seconds, heart rate) of each row of a `*-records.csv` that has a heart rate.
    static func expectedRecords(_ name: String) throws -> [(unixSeconds: Int64, heartRate: UInt8)] {
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline)
        #expect(lines.first?.hasPrefix("timestamp,heart_rate,") == true)
        return try lines.dropFirst().compactMap { line in
            let columns = line.split(separator: ",", omittingEmptySubsequences: false)
            guard columns.count > 1, let heartRate = UInt8(columns[1]) else { return nil }
            return (try CSVTime.unixSeconds(String(columns[0])), heartRate)
        }
    }
}

/// The CSV files' times: local time with a zone abbreviation, as in
/// "Mon Jun 12 09:09:22 PDT 2017".
enum CSVTime {
    static let zoneHours: [String: Int64] = [
        "UTC": 0, "GMT": 0, "PDT": -7, "PST": -8, "MDT": -6, "MST": -7, "CDT": -5, "CST": -6, "EDT": -4, "EST": -5,
        "BST": 1, "CET": 1, "CEST": 2,
    ]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    struct Unreadable: Error, CustomStringConvertible {
        var text: String
        var description: String { "unreadable CSV time: \(text)" }
    }

    static func unixSeconds(_ text: String) throws -> Int64 {
        let parts = text.split(separator: " ").map(String.init)
        let clock = parts.count == 6 ? parts[3].split(separator: ":").compactMap { Int64($0) } : []
        guard parts.count == 6, let month = months.firstIndex(of: parts[1]), let day = Int64(parts[2]), clock.count == 3,
            let zone = zoneHours[parts[4]], let year = Int64(parts[5])
        else { throw Unreadable(text: text) }
        let local = days(year: year, month: Int64(month + 1), day: day) * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
        return local - zone * 3600
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

@Suite("CSV times")
struct CSVTimeTests {
    @Test("zone abbreviations become exact UTC seconds")
    func conversions() throws {
        #expect(try CSVTime.unixSeconds("Thu Jan 01 00:00:00 UTC 1970") == 0)
        #expect(try CSVTime.unixSeconds("Mon Jun 12 09:09:22 PDT 2017") == 1_497_283_762)  // 16:09:22Z
        #expect(try CSVTime.unixSeconds("Sat Dec 30 16:00:00 PST 1989") == 631_065_600)  // the FIT epoch
        #expect(throws: CSVTime.Unreadable.self) { try CSVTime.unixSeconds("Mon Jun 12 09:09:22 XYZ 2017") }
        #expect(throws: CSVTime.Unreadable.self) { try CSVTime.unixSeconds("2017-06-12T16:09:22Z") }
    }
}
