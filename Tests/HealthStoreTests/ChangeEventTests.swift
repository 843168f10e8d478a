import Foundation
import GRDB
import HealthUnits
import Synchronization
import TestSupport
import Testing

import HealthModel
@testable import HealthStore

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
        #expect(log.all == [StoreChange(anchor: try store.currentAnchor(), sources: [.heartRate: ["hrmd"]])])
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
        #expect(log.all == [
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
}
