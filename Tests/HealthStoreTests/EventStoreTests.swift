import Foundation
import Synchronization
import TestSupport
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Events: stored, changed in place at new anchors, announced, and read by the read rule")
struct EventStoreTests {
    private func at(_ seconds: Double) -> Timestamp { Fixture.base.advanced(bySeconds: seconds) }

    private func high(_ id: String = "e-1", device: String = "strap-1", start: Double = 0, latest: Double = 600, closed: Bool = false)
        -> HealthEvent
    {
        HealthEvent(
            id: id, type: .highHeartRateEvent, source: HealthSource.eventWriter, device: device, person: nil, start: at(start),
            end: closed ? at(latest) : nil, latest: at(latest), threshold: 120, extreme: 131)
    }

    private func store(at path: String) throws -> HealthStore {
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        for type in SampleType.eventTypes { try store.setShareAuthorization(.sharingAuthorized, source: HealthSource.eventWriter, type: type) }
        return store
    }

    @Test("an event is opened, extended and closed in place, each save at a new anchor and announced as it is after it")
    func openExtendClose() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("events.sqlite"))
        let announced = Mutex<[ChangeDetail]>([])
        let observation = store.observeChanges { change in announced.withLock { $0.append(change.detail ?? ChangeDetail()) } }
        var event = high()
        try store.saveEvent(event)
        let opened = try store.currentAnchor()
        event.latest = at(700)
        event.extreme = 140
        try store.saveEvent(event)
        event.latest = at(760)
        event.end = at(760)
        try store.saveEvent(event)
        observation.cancel()
        #expect(try store.currentAnchor() == opened + 2)
        #expect(announced.withLock { $0.map(\.events) } == [[high()], [{ var e = high(); e.latest = at(700); e.extreme = 140; return e }()], [event]])
        // Read back the same, also from the file opened again.
        #expect(try store.events(EventQuery()) == [event])
        #expect(try HealthStore.open(path: directory.file("events.sqlite"), mode: .existingOnly).events(EventQuery()) == [event])
    }

    @Test("the anchored event changes: each event once, as its last save left it, in the order of those saves, paged")
    func anchoredChanges() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("events.sqlite"))
        let before = try store.currentAnchor()
        var first = high("e-1", device: "strap-1")
        try store.saveEvent(first)
        let second = high("e-2", device: "strap-2", start: 10)
        try store.saveEvent(second)
        let middle = try store.currentAnchor()
        first.end = at(900)
        first.latest = at(900)
        try store.saveEvent(first)
        // The first event's save moved it past the second.
        let all = try store.eventChanges(since: before, limit: 10)
        #expect(all.events == [second, first])
        #expect(all.anchor == (try store.currentAnchor()))
        let page = try store.eventChanges(since: before, limit: 1)
        #expect(page.events == [second])
        #expect(try store.eventChanges(since: page.anchor, limit: 10).events == [first])
        #expect(try store.eventChanges(since: before, through: middle, limit: 10).events == [second], "a save after `through` is left for it")
        #expect(try store.eventChanges(since: all.anchor, limit: 10).events.isEmpty)
    }

    @Test("only hrmd writes events, with share authorization of their type; no other source may be granted it")
    func onlyHrmdWrites() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("events.sqlite"), mode: .createIfMissing)
        #expect(throws: HealthStoreError.shareNotAuthorized(source: "hrmd", types: ["high-heart-rate-event"])) { try store.saveEvent(high()) }
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .highHeartRateEvent)
        try store.saveEvent(high())
        var forged = high("e-2", device: "strap-2")
        forged.source = "mary/app"
        #expect(throws: HealthStoreError.self) { try store.saveEvent(forged) }
        #expect(throws: HealthStoreError.self) { try store.setShareAuthorization(.sharingAuthorized, source: "mary/app", type: .highHeartRateEvent) }
        // Reading may be granted; a revoke of share is always allowed.
        try store.setReadAuthorization(.sharingAuthorized, source: "mary/app", type: .highHeartRateEvent)
        try store.setShareAuthorization(.sharingDenied, source: "mary/app", type: .highHeartRateEvent)
        #expect(try store.events(EventQuery()).map(\.id) == ["e-1"])
    }

    @Test("a deleted event leaves a tombstone: gone from queries, in the anchored changes by id and type, announced; an unknown one is a conflict")
    func deleted() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("events.sqlite"))
        let event = high("e-1", closed: true)
        try store.saveEvent(event)
        try store.saveEvent(high("e-2", device: "strap-2"))
        let before = try store.currentAnchor()
        let announced = Mutex<[ChangeDetail]>([])
        let observation = store.observeChanges { change in announced.withLock { $0.append(change.detail ?? ChangeDetail()) } }
        #expect(try store.deleteEvent("e-1") == event)
        observation.cancel()
        #expect(try store.events(EventQuery()).map(\.id) == ["e-2"])
        let changes = try store.eventChanges(since: before, limit: 10)
        #expect(changes.events.isEmpty)
        #expect(changes.deleted == [DeletedEvent(id: "e-1", type: .highHeartRateEvent, source: HealthSource.eventWriter, device: "strap-1")])
        #expect(changes.anchor == before + 1)
        #expect(try store.eventChanges(of: .lowHeartRateEvent, since: before, limit: 10).deleted.isEmpty, "narrowed to another type")
        #expect(announced.withLock { $0.map(\.deletedEvents) } == [[DeletedEvent(event)]])
        #expect(throws: HealthStoreError.self) { try store.deleteEvent("e-1") }
        #expect(throws: HealthStoreError.self, "still open") { try store.deleteEvent("e-2") }
        // Saved again (a replay of the recording that made it), it is back: the tombstone stays in the changes.
        try store.saveEvent(event)
        #expect(try store.events(EventQuery()).map(\.id).sorted() == ["e-1", "e-2"])
    }

    @Test("events saved together: one transaction, one anchor each stored; a refused one is its own outcome and holds back no other")
    func savedTogether() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("events.sqlite"))
        try store.setShareAuthorization(.sharingDenied, source: HealthSource.eventWriter, type: .lowHeartRateEvent)
        let before = try store.currentAnchor()
        var low = high("e-low", device: "strap-3")
        low.type = .lowHeartRateEvent
        let outcomes = try store.saveEvents([
            high("e-1"), high("e-2", start: 10), low, high("e-3", device: "strap-2", closed: true), high("e-1"),
        ])
        let failures = outcomes.map { outcome -> String in
            switch outcome {
            case .success: "ok"
            case .failure(.shareNotAuthorized): "not shared"
            case .failure(.conflict): "conflict"
            case .failure: "other"
            }
        }
        #expect(failures == ["ok", "conflict", "not shared", "ok", "ok"], "a second open event of strap-1 conflicts; the repeat changes nothing")
        #expect(try store.events(EventQuery()).map(\.id).sorted() == ["e-1", "e-3"])
        #expect(try store.currentAnchor() == before + 2, "an anchor for each event stored, none for a refused one")
    }

    @Test("a strap has one open event of a type; an event's identity (type, strap, start) does not change")
    func oneOpenPerStrap() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("events.sqlite"))
        try store.saveEvent(high())
        #expect(throws: HealthStoreError.self) { try store.saveEvent(high("e-2")) }
        try store.saveEvent(high("e-3", device: "strap-2"))
        var moved = high()
        moved.start = at(1)
        #expect(throws: HealthStoreError.self) { try store.saveEvent(moved) }
        try store.saveEvent(high(closed: true))
        try store.saveEvent(high("e-2", start: 900, latest: 1000))
        #expect(Set(try store.events(EventQuery(openOnly: true)).map(\.id)) == ["e-2", "e-3"])
    }

    @Test("a reader sees events of the types it may read; a query narrows by type, time, strap, person, openness and count")
    func readRuleAndQueries() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("events.sqlite"))
        try store.savePerson(Person(name: "ann"), creating: true)
        try store.saveEvent(high("h-1", start: 0, latest: 600, closed: true))
        try store.saveEvent(high("h-2", start: 1000, latest: 1700))
        try store.saveEvent(HealthEvent(
            id: "l-1", type: .lowHeartRateEvent, source: "hrmd", device: "strap-2", person: "ann", start: at(100), end: at(800),
            latest: at(800), threshold: 40, extreme: 35))
        try store.saveEvent(HealthEvent(
            id: "c-1", type: .sensorContactLost, source: "hrmd", device: "strap-2", person: "ann", start: at(2000), end: nil, latest: at(2040)))
        #expect(try store.events(EventQuery()).map(\.id) == ["c-1", "h-2", "l-1", "h-1"], "newest start first")
        #expect(try store.events(EventQuery(reader: "mary/app")).isEmpty, "without read authorization, nothing")
        try store.setReadAuthorization(.sharingAuthorized, source: "mary/app", type: .lowHeartRateEvent)
        #expect(try store.events(EventQuery(reader: "mary/app")).map(\.id) == ["l-1"])
        #expect(try store.events(EventQuery(types: [.highHeartRateEvent])).map(\.id) == ["h-2", "h-1"])
        #expect(try store.events(EventQuery(since: at(650), until: at(1500))).map(\.id) == ["h-2", "l-1"], "overlapping the range")
        #expect(try store.events(EventQuery(person: "ann")).map(\.id) == ["c-1", "l-1"])
        #expect(try store.events(EventQuery(device: "strap-1")).map(\.id) == ["h-2", "h-1"])
        #expect(try store.events(EventQuery(openOnly: true)).map(\.id) == ["c-1", "h-2"])
        #expect(try store.events(EventQuery(limit: 1)).map(\.id) == ["c-1"])
        #expect(try store.events(EventQuery(types: [.heartRate])).isEmpty, "not an event type")
    }
}
