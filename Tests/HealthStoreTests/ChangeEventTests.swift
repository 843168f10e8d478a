import Foundation
import GRDB
import HealthUnits
import Synchronization
import TestSupport
import Testing

import HealthModel
@testable import HealthStore

extension StoreChange {
    /// The anchor and sources of the change, without the rest.
    var announced: StoreChange { StoreChange(anchor: anchor, sources: sources) }
}

/// Collects the changes a store announces.
final class ChangeLog: Sendable {
    private let changes = Mutex<[StoreChange]>([])
    var all: [StoreChange] { changes.withLock { $0 } }
    func append(_ change: StoreChange) { changes.withLock { $0.append(change) } }
}

@Suite("Change events")
struct ChangeEventTests {
    @Test("a save that adds samples is announced once, after the commit, with the newest anchor and its source")
    func saveIsAnnounced() throws {
        let store = try Fixture.authorizedStore()
        let log = ChangeLog()
        let observation = store.observeChanges { change in
            // After the commit: another read already sees the samples.
            #expect((try? store.sampleCount(of: .heartRate)) == 3)
            log.append(change)
        }
        _ = try store.save(try (0..<3).map { try Fixture.heartRate(60, at: Double($0)) }, from: Fixture.hrmd)
        #expect(log.all.map(\.announced) == [StoreChange(anchor: try store.currentAnchor(), sources: [.heartRate: ["hrmd"]])])
        observation.cancel()
    }

    @Test("saves that change nothing, denied saves and refused saves are not announced")
    func nothingChanged() throws {
        let store = try Fixture.authorizedStore()
        let sample = try Fixture.heartRate(60, at: 0)
        _ = try store.save([sample], from: Fixture.hrmd)
        let log = ChangeLog()
        let observation = store.observeChanges(log.append)
        #expect(try store.save([sample], from: Fixture.hrmd).unchanged == 1)
        #expect(try store.save([sample], from: HealthSource(name: "stranger")).deniedCount == 1)
        #expect(throws: HealthStoreError.self) {
            try store.save([sample], from: HealthSource(name: "stranger"), policy: .refuseUnauthorized)
        }
        #expect(try store.deleteSamples(of: .heartRate, source: "stranger") == 0)
        #expect(log.all.isEmpty)
        observation.cancel()
    }

    @Test("deletes and sync-version replacements are announced with their types and sources")
    func deleteAndReplace() throws {
        let store = try Fixture.authorizedStore()
        try store.setShareAuthorization(.sharingAuthorized, source: "importer", type: .heartRate)
        let synced = try Fixture.heartRate(60, at: 0, metadata: SampleMetadata(syncIdentifier: "a", syncVersion: 1))
        _ = try store.save([synced], from: HealthSource(name: "importer"))
        _ = try store.save([try Fixture.heartRate(61, at: 1)], from: Fixture.hrmd)
        let log = ChangeLog()
        let observation = store.observeChanges(log.append)
        let newer = try Fixture.heartRate(62, at: 0, metadata: SampleMetadata(syncIdentifier: "a", syncVersion: 2))
        #expect(try store.save([newer], from: HealthSource(name: "importer")).replaced == 1)
        let afterReplace = try store.currentAnchor()
        #expect(try store.deleteSamples(of: .heartRate, source: "hrmd") == 1)
        #expect(log.all.map(\.announced) == [
            StoreChange(anchor: afterReplace, sources: [.heartRate: ["importer"]]),
            StoreChange(anchor: try store.currentAnchor(), sources: [.heartRate: ["hrmd"]]),
        ])
        observation.cancel()
    }

    @Test("a batch of several types names each type's source")
    func severalTypes() throws {
        let store = try Fixture.authorizedStore()
        let log = ChangeLog()
        let observation = store.observeChanges(log.append)
        let rr = try QuantitySample(
            type: .rrInterval, quantity: Quantity(unit: .millisecond, doubleValue: 800),
            start: Fixture.base, end: Fixture.base.advanced(bySeconds: 0.8))
        _ = try store.save([try Fixture.heartRate(60, at: 0), rr], from: Fixture.hrmd)
        #expect(log.all.map(\.sources) == [[.heartRate: ["hrmd"], .rrInterval: ["hrmd"]]])
        observation.cancel()
    }

    @Test("a transaction that rolls back is not announced")
    func rollback() throws {
        let store = try Fixture.authorizedStore()
        let log = ChangeLog()
        let observation = store.observeChanges(log.append)
        // The second sample's device has an empty identifier, which the schema refuses after
        // the first sample was inserted: the whole save rolls back.
        let bad = try Fixture.heartRate(61, at: 1, device: HealthDevice(localIdentifier: ""))
        #expect(throws: HealthStoreError.self) { try store.save([try Fixture.heartRate(60, at: 0), bad], from: Fixture.hrmd) }
        #expect(try store.sampleCount(of: .heartRate) == 0)
        #expect(log.all.isEmpty)
        observation.cancel()
    }

    @Test("cancel and release both stop the calls; other observers go on")
    func cancelAndRelease() throws {
        let store = try Fixture.authorizedStore()
        let kept = ChangeLog(), cancelled = ChangeLog(), released = ChangeLog()
        let keep = store.observeChanges(kept.append)
        let cancel = store.observeChanges(cancelled.append)
        var release: StoreChangeObservation? = store.observeChanges(released.append)
        _ = try store.save([try Fixture.heartRate(60, at: 0)], from: Fixture.hrmd)
        cancel.cancel()
        release = nil
        _ = try store.save([try Fixture.heartRate(60, at: 1)], from: Fixture.hrmd)
        #expect(release == nil)
        #expect(kept.all.count == 2 && cancelled.all.count == 1 && released.all.count == 1)
        keep.cancel()
        _ = try store.save([try Fixture.heartRate(60, at: 2)], from: Fixture.hrmd)
        #expect(kept.all.count == 2)
    }

    @Test("concurrent writers through a file store: each commit announced once, before its save returns")
    func fileStoreConcurrent() async throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("hr.sqlite"), mode: .createIfMissing)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let log = ChangeLog()
        let observation = store.observeChanges(log.append)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<10 {
                        let before = log.all.count
                        _ = try store.save([try Fixture.heartRate(60, at: Double(writer * 100 + index))], from: Fixture.hrmd)
                        // This thread's own announcement came before save returned.
                        #expect(log.all.count > before)
                    }
                }
            }
            try await group.waitForAll()
        }
        let anchors = log.all.map(\.anchor)
        #expect(anchors.count == 40 && Set(anchors).count == 40)
        #expect(anchors.max() == (try store.currentAnchor()))
        observation.cancel()
    }

    @Test("a handler may read the store")
    func handlerReads() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("hr.sqlite"), mode: .createIfMissing)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let counts = Mutex<[Int]>([])
        let observation = store.observeChanges { change in
            let added = (try? store.changes(of: .heartRate, since: change.anchor - 1).added.count) ?? -1
            counts.withLock { $0.append(added) }
        }
        _ = try store.save([try Fixture.heartRate(60, at: 0)], from: Fixture.hrmd)
        #expect(counts.withLock { $0 } == [1])
        observation.cancel()
    }

    @Test("what a change carries equals what the anchored queries read back after it: samples with merged device records, metadata, beat spans and ANT+ stamps, sync replacements, deletions and workouts")
    func detailEqualsWhatIsReadBack() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("hr.sqlite"), mode: .createIfMissing)
        for type in [SampleType.heartRate, .rrInterval] {
            try store.setShareAuthorization(.sharingAuthorized, source: Fixture.hrmd.name, type: type)
            try store.setShareAuthorization(.sharingAuthorized, source: "importer", type: type)
        }
        // The strap's record first names its maker; later samples name only the strap: a
        // reader sees the merged record, and so must a change.
        _ = try store.save([try Fixture.heartRate(59, at: -1)], from: Fixture.hrmd)
        // Each change, with what the anchored queries read back right after its commit (a
        // handler runs then, before the next write).
        let log = Mutex<[(change: StoreChange, added: [StoredSample], deleted: [DeletedSample], workouts: WorkoutChangeSet?)]>([])
        let observation = store.observeChanges { change in
            var added: [StoredSample] = []
            var deleted: [DeletedSample] = []
            for type in [SampleType.heartRate, .rrInterval] {
                let read = try? store.changes(of: type, since: change.previousAnchor, limit: 100)
                added += read?.added ?? []
                deleted += read?.deleted ?? []
            }
            let workouts = try? store.workoutChanges(since: change.previousAnchor, limit: 100, reader: nil)
            log.withLock { $0.append((change, added.sorted { $0.id < $1.id }, deleted.sorted { $0.anchor < $1.anchor }, workouts)) }
        }
        let bare = HealthDevice(localIdentifier: Fixture.strap.localIdentifier)
        var paged = try Fixture.heartRate(60, at: 0, device: bare)
        paged.antBeat = ANTBeatStamp(count: 7, eventTime: 1024)
        let rr = try QuantitySample(
            type: .rrInterval, quantity: Quantity(unit: .millisecond, doubleValue: 812.5),
            start: Fixture.base, end: Fixture.base.advanced(bySeconds: 0.8125), device: bare)
        let located = try Fixture.heartRate(61, at: 1, device: nil, metadata: SampleMetadata(sensorLocation: .wrist))
        _ = try store.save([paged, rr, located], from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(62, at: 2, metadata: SampleMetadata(syncIdentifier: "a", syncVersion: 1))], from: HealthSource(name: "importer"))
        _ = try store.save([try Fixture.heartRate(63, at: 2, metadata: SampleMetadata(syncIdentifier: "a", syncVersion: 2))], from: HealthSource(name: "importer"))
        #expect(try store.deleteSamples(of: .heartRate, source: Fixture.hrmd.name, since: Fixture.base) == 2)
        try store.savePerson(Person(name: "ann"), creating: true)
        let workout = Workout(
            id: "w-1", source: "coach", person: "ann", device: nil, activity: .running, start: Fixture.base, end: nil, events: [])
        try store.saveWorkout(workout)
        try store.addWorkoutEvent(WorkoutEvent(.lap, at: Fixture.base.advanced(bySeconds: 60)), to: "w-1", writer: nil)
        try store.deleteWorkout("w-1", writer: nil)
        observation.cancel()

        let entries = log.withLock { $0 }
        #expect(entries.count == 7)
        var previous: Int64? = nil
        for entry in entries {
            let detail = try #require(entry.change.detail)
            if let previous { #expect(entry.change.previousAnchor == previous, "each change follows the one before") }
            previous = entry.change.anchor
            #expect(detail.added == entry.added)
            #expect(detail.deleted == entry.deleted)
            #expect(detail.workouts == entry.workouts?.workouts)
            #expect(detail.deletedWorkouts == entry.workouts?.deleted)
        }
        let changes = entries.map(\.change)
        #expect(changes[0].detail?.added.count == 3)
        #expect(changes[0].detail?.added.first?.sample.device?.manufacturer == Fixture.strap.manufacturer)
        #expect(changes[0].detail?.added.first?.sample.antBeat == ANTBeatStamp(count: 7, eventTime: 1024))
        #expect(changes[2].detail?.deleted.count == 1 && changes[2].detail?.added.count == 1, "a replacement is a deletion and an addition")
        #expect(changes[3].detail?.deleted.count == 2)
        #expect(changes[4].detail?.workouts == [workout])
        #expect(changes[6].detail?.deletedWorkouts == ["w-1"])
    }

    @Test("a transaction of more samples than a change carries announces its sources without the samples")
    func largeChangeCarriesNoDetail() throws {
        let store = try Fixture.authorizedStore()
        let log = ChangeLog()
        let observation = store.observeChanges(log.append)
        let samples = try (0...StoreChange.detailLimit).map { try Fixture.heartRate(60, at: Double($0)) }
        _ = try store.save(samples, from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(60, at: -1)], from: Fixture.hrmd)
        observation.cancel()
        #expect(log.all.map { $0.detail == nil } == [true, false])
        #expect(log.all.map(\.sources) == [[.heartRate: ["hrmd"]], [.heartRate: ["hrmd"]]])
    }
}
