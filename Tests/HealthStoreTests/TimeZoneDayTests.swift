import Foundation
import GRDB
import HealthUnits
import TestSupport
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Day buckets in any time zone")
struct TimeZoneDayTests {
    /// One day's statistics computed sample by sample with a Calendar in the zone.
    struct Day: Equatable {
        var start: Timestamp
        var end: Timestamp
        var values: [Double]
    }

    static func seconds(_ text: String) throws -> Int64 {
        let time = try #require(RFC3339.parse(text))
        return time.microsecondsSinceEpoch / 1_000_000
    }

    /// Samples from `first` to `last` (RFC 3339), `step` microseconds apart, with values
    /// from a seeded generator; saved as hrmd's.
    func store(from first: String, to last: String, step: Int64) throws -> (HealthStore, [QuantitySample]) {
        let store = try Fixture.authorizedStore()
        var generator = SplitMix64(seed: 11)
        var samples: [QuantitySample] = []
        var time = try Self.seconds(first) * 1_000_000
        let end = try Self.seconds(last) * 1_000_000
        while time <= end {
            let at = Timestamp(microsecondsSinceEpoch: time)
            samples.append(try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: Double(40 + generator.next() % 150)),
                start: at, end: at, device: Fixture.strap))
            time += step
        }
        _ = try store.save(samples, from: Fixture.hrmd)
        return (store, samples)
    }

    /// The brute-force answer: each sample's day by the Calendar, the day's bounds as the
    /// Calendar's start of that day and of the next.
    func bruteForce(_ samples: [QuantitySample], zone: TimeZone, since: Timestamp?, until: Timestamp?) throws -> [Day] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var days: [Timestamp: Day] = [:]
        for sample in samples {
            if let since, sample.start < since { continue }
            if let until, sample.start >= until { continue }
            let date = Date(timeIntervalSince1970: sample.start.secondsSinceEpoch)
            let start = calendar.startOfDay(for: date)
            let next = try #require(calendar.date(byAdding: .day, value: 1, to: start.addingTimeInterval(12 * 3600)))
            let key = Timestamp(secondsSinceEpoch: start.timeIntervalSince1970)
            days[key, default: Day(start: key, end: Timestamp(secondsSinceEpoch: calendar.startOfDay(for: next).timeIntervalSince1970), values: [])]
                .values.append(sample.canonicalValue)
        }
        return days.values.sorted { $0.start < $1.start }
    }

    func check(_ store: HealthStore, _ samples: [QuantitySample], zone: TimeZone, since: Timestamp?, until: Timestamp?) throws {
        let want = try bruteForce(samples, zone: zone, since: since, until: until)
        let got = try store.statistics(of: .heartRate, by: .days(zone), since: since, until: until)
        #expect(got.map(\.start) == want.map(\.start), "\(zone.identifier) starts")
        #expect(got.map(\.end) == want.map(\.end), "\(zone.identifier) ends")
        for (bucket, day) in zip(got, want) {
            #expect(bucket.count == day.values.count, "\(zone.identifier) \(bucket.start)")
            #expect(bucket.minimum == day.values.min() && bucket.maximum == day.values.max())
            #expect(bucket.sum == day.values.reduce(0, +))
            #expect(abs(bucket.average - day.values.reduce(0, +) / Double(day.values.count)) < 1e-9)
        }
    }

    @Test("Europe/Berlin across both DST changes: days of 23 and 25 hours, every sample in its day")
    func berlin() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 7 min 13.5 s apart: samples fall on both sides of every midnight and change.
        for (first, last, short) in [("2026-03-27T00:00:00Z", "2026-03-31T00:00:00Z", true), ("2026-10-23T00:00:00Z", "2026-10-27T00:00:00Z", false)] {
            let (store, samples) = try store(from: first, to: last, step: 433_500_000)
            try check(store, samples, zone: zone, since: nil, until: nil)
            let since = Timestamp(microsecondsSinceEpoch: try Self.seconds(first) * 1_000_000 + 37_250_000)
            let until = Timestamp(microsecondsSinceEpoch: try Self.seconds(last) * 1_000_000 - 13_500_000)
            try check(store, samples, zone: zone, since: since, until: until)
            let lengths = try store.statistics(of: .heartRate, by: .days(zone)).map {
                ($0.end.microsecondsSinceEpoch - $0.start.microsecondsSinceEpoch) / 3_600_000_000
            }
            #expect(lengths.contains(short ? 23 : 25), "\(lengths)")
        }
    }

    @Test("Asia/Kolkata (+5:30): a day runs from 18:30 UTC to 18:30 UTC")
    func kolkata() throws {
        let zone = try #require(TimeZone(identifier: "Asia/Kolkata"))
        let (store, samples) = try store(from: "2026-11-18T18:00:00Z", to: "2026-11-21T19:00:00Z", step: 301_000_000)
        try check(store, samples, zone: zone, since: nil, until: nil)
        let since = Timestamp(microsecondsSinceEpoch: try Self.seconds("2026-11-19T18:29:59Z") * 1_000_000 + 500_000)
        try check(store, samples, zone: zone, since: since, until: Timestamp(microsecondsSinceEpoch: try Self.seconds("2026-11-21T06:00:30Z") * 1_000_000))
        let days = try store.statistics(of: .heartRate, by: .days(zone))
        #expect(days.dropFirst().first?.start.microsecondsSinceEpoch == (try Self.seconds("2026-11-18T18:30:00Z")) * 1_000_000)
        // The same samples in UTC days are cut elsewhere.
        let utc = try store.statistics(of: .heartRate, by: .days(try #require(TimeZone(identifier: "UTC"))))
        #expect(utc.map(\.count) != days.map(\.count))
    }

    @Test("a zone whose offset is not whole minutes (Monrovia before 1972) still puts every sample in its day")
    func secondsOffset() throws {
        let zone = try #require(TimeZone(identifier: "Africa/Monrovia"))
        let (store, samples) = try store(from: "1971-03-01T00:00:00Z", to: "1971-03-04T00:00:00Z", step: 173_000_000)
        try check(store, samples, zone: zone, since: nil, until: nil)
        try check(store, samples, zone: zone, since: samples[5].start, until: samples[samples.count - 5].start)
    }

    @Test("localDays is the process's zone")
    func localDays() {
        #expect(StatisticsBucket.localDays == .days(.current))
    }

    @Test("the day of a time picks the right offset on either side of each of 20 changes")
    func offsetTree() throws {
        let zone = try #require(TimeZone(identifier: "America/New_York"))
        let first = try Self.seconds("2010-01-01T00:00:00Z"), last = try Self.seconds("2020-01-01T00:00:00Z")
        let days = ZoneDays(zone: zone, first: first, last: last)
        #expect(days.changes.count == 20)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        for change in days.changes {
            // Around each change, and around the local midnights next to it.
            for second in [change - 1, change, change + 1, change - 4 * 3600 - 1, change - 4 * 3600, change + 22 * 3600] {
                let local = second + days.offset(atSecond: second)
                let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
                let bounds = try #require(days.bounds(ofDayNumber: day))
                let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(second)))
                let midnight = try #require(calendar.date(from: parts))
                #expect(bounds.start == Timestamp(secondsSinceEpoch: midnight.timeIntervalSince1970), "\(second)")
                #expect(bounds.start.secondsSinceEpoch <= Double(second) && Double(second) < bounds.end.secondsSinceEpoch, "\(second)")
            }
        }
    }
}
