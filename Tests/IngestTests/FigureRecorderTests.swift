import Foundation
import GRDB
import HealthModel
import HealthStore
import HealthUnits
import TestSupport
import Testing
import Timestamps

@testable import Ingest

@Suite("hrmd's figures fall due by the readings' times, live and across restarts")
struct FigureRecorderTests {
    let store: HealthStore
    let log = LogLines()
    static let hrmd = HealthSource(name: "hrmd")
    /// 2026-11-20 00:00:00 UTC.
    static let day = Timestamp(microsecondsSinceEpoch: 1_795_132_800_000_000)

    init() throws {
        store = try HealthStore(writer: DatabaseQueue())
        for type in [SampleType.heartRate, .rrInterval] + SampleType.figureTypes {
            try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: type)
        }
    }

    func recorder() -> FigureRecorder {
        FigureRecorder(source: Self.hrmd, timeZone: TimeZone(identifier: "UTC")!, logger: log.logger)
    }

    /// One reading a second of `device` from `start` for `seconds`, at `bpm`.
    static func readings(_ device: String, from start: Timestamp, seconds: Int, bpm: Double) throws -> [QuantitySample] {
        try (0..<seconds).map { second in
            let time = start.advanced(bySeconds: Double(second))
            return try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: bpm), start: time, end: time,
                device: HealthDevice(localIdentifier: device))
        }
    }

    /// Saves `samples` as hrmd and hands them to `recorder` as ingest does, a minute at a time.
    func write(_ samples: [QuantitySample], to recorder: inout FigureRecorder) throws {
        for start in stride(from: 0, to: samples.count, by: 60) {
            let batch = Array(samples[start..<min(start + 60, samples.count)])
            _ = try store.save(batch, from: Self.hrmd)
            recorder.observe(batch, in: store)
        }
    }

    func figures(_ type: SampleType) throws -> [QuantitySample] {
        try store.samples(SampleQuery(type: type)).map(\.sample)
    }

    @Test("a strap's first reading of the next day completes the day before: its resting heart rate, without the recording ending")
    func dayCrossedLive() throws {
        var figures = recorder()
        // 70 minutes of rest at 58 from 09:00, then a reading after midnight.
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 9 * 3600), seconds: 4200, bpm: 58), to: &figures)
        #expect(try self.figures(.restingHeartRate).isEmpty, "the day is not over")
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 86_400 + 300), seconds: 1, bpm: 70), to: &figures)
        let resting = try self.figures(.restingHeartRate)
        #expect(resting.map(\.canonicalValue) == [58])
        #expect(resting.first?.start == Self.day.advanced(bySeconds: 9 * 3600))
        #expect(resting.first?.device?.localIdentifier == "strap-1")
        #expect(resting.first?.metadata.syncIdentifier == "hrmd/resting-heart-rate/device:strap-1/2026-11-20")
        #expect(log.lines.contains("figures: resting heart rate of device:strap-1 on 2026-11-20: 58 count/min"), "\(log.lines)")
    }

    @Test("a run that starts the day after looks back: the day the last run did not see end is worked out once, however often")
    func restartAfterMidnight() throws {
        var before = recorder()
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 20 * 3600), seconds: 4200, bpm: 61), to: &before)
        // hrmd stops before midnight; two later runs start the next morning.
        for _ in 0..<2 {
            var after = recorder()
            try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 86_400 + 7 * 3600), seconds: 5, bpm: 70), to: &after)
        }
        #expect(try figures(.restingHeartRate).map(\.canonicalValue) == [61])
    }

    @Test("a day with less than an hour of rest outside workouts has no resting heart rate, and says so")
    func notEnoughRest() throws {
        var figures = recorder()
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 9 * 3600), seconds: 3000, bpm: 58), to: &figures)
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 86_400), seconds: 1, bpm: 70), to: &figures)
        #expect(try self.figures(.restingHeartRate).isEmpty)
        #expect(log.lines.contains { $0.hasPrefix("figures: no resting heart rate for device:strap-1 on 2026-11-20: fewer than 12") }, "\(log.lines)")
    }

    @Test("a person's day covers every strap they wore; the strap's own time without them is the strap's")
    func personOverTwoStraps() throws {
        try store.savePerson(Person(name: "ann"), creating: true)
        let nine = Self.day.advanced(bySeconds: 9 * 3600)
        try store.assignStrap(device: "strap-1", person: "ann", from: nine, until: nine.advanced(bySeconds: 1800))
        try store.assignStrap(device: "strap-2", person: "ann", from: nine.advanced(bySeconds: 1800), until: nil)
        var figures = recorder()
        // ann: 30 minutes on each strap (12 windows together, none alone); strap-1 on its own afterwards.
        try write(try Self.readings("strap-1", from: nine, seconds: 1800, bpm: 57), to: &figures)
        try write(try Self.readings("strap-2", from: nine.advanced(bySeconds: 1800), seconds: 1800, bpm: 55), to: &figures)
        try write(try Self.readings("strap-1", from: nine.advanced(bySeconds: 1800), seconds: 3600, bpm: 66), to: &figures)
        for device in ["strap-1", "strap-2"] {
            try write(try Self.readings(device, from: Self.day.advanced(bySeconds: 86_400), seconds: 1, bpm: 70), to: &figures)
        }
        let resting = try self.figures(.restingHeartRate).sorted { $0.canonicalValue < $1.canonicalValue }
        #expect(resting.map(\.canonicalValue) == [55, 66], "ann's once, from both straps; strap-1's own")
        #expect(resting.map { $0.device?.localIdentifier } == ["strap-2", "strap-1"])
        #expect(resting.map(\.metadata.syncIdentifier) == [
            "hrmd/resting-heart-rate/person:ann/2026-11-20", "hrmd/resting-heart-rate/device:strap-1/2026-11-20",
        ])
    }

    @Test("a workout's recovery falls due when its strap's readings reach 65 s past its end, not before")
    func recoveryWhenDue() throws {
        let end = Self.day.advanced(bySeconds: 10 * 3600)
        try store.saveWorkout(Workout(
            id: "w-1", source: "hrmctl", person: nil, device: "strap-1", activity: .running, start: end.advanced(bySeconds: -600), end: end))
        var figures = recorder()
        try write(try Self.readings("strap-1", from: end.advanced(bySeconds: -30), seconds: 30, bpm: 160), to: &figures)
        try write(try Self.readings("strap-1", from: end, seconds: 65, bpm: 125), to: &figures)
        #expect(try self.figures(.heartRateRecoveryOneMinute).isEmpty, "the last reading is 64 s past the end")
        try write(try Self.readings("strap-1", from: end.advanced(bySeconds: 65), seconds: 1, bpm: 125), to: &figures)
        let recovery = try self.figures(.heartRateRecoveryOneMinute)
        #expect(recovery.map(\.canonicalValue) == [35])
        #expect(recovery.first?.start == end)
        #expect(recovery.first?.metadata.syncIdentifier == "hrmd/heart-rate-recovery-one-minute/w-1")
    }

    @Test("without hrmd's grant of a figure type its figures are not stored, told once; once granted they are, told again")
    func grantLater() throws {
        try store.setShareAuthorization(.sharingDenied, source: "hrmd", type: .restingHeartRate)
        var figures = recorder()
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 9 * 3600), seconds: 4200, bpm: 58), to: &figures)
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 86_400), seconds: 1, bpm: 70), to: &figures)
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 86_400 * 2), seconds: 1, bpm: 70), to: &figures)
        let warning = "figures: hrmd may not store resting-heart-rate; grant it with: hrmctl auth grant hrmd resting-heart-rate"
        #expect(log.lines.filter { $0 == warning }.count == 1, "\(log.lines)")
        #expect(try self.figures(.restingHeartRate).isEmpty)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .restingHeartRate)
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 86_400 * 2 + 9 * 3600), seconds: 4200, bpm: 57), to: &figures)
        try write(try Self.readings("strap-1", from: Self.day.advanced(bySeconds: 86_400 * 3), seconds: 1, bpm: 70), to: &figures)
        #expect(try self.figures(.restingHeartRate).map(\.canonicalValue) == [57])
        #expect(log.lines.contains("figures: recording resting-heart-rate again"), "\(log.lines)")
    }
}
