import Foundation
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("People and the straps they wore")
struct PeopleTests {
    private func at(_ hour: Int64) -> Timestamp { Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000 + hour * 3_600_000_000) }

    @Test("a person is added once, changed only when there, and removed with their assignments")
    func lifecycle() throws {
        let store = try Fixture.memoryStore()
        let ann = Person(name: "ann", birthYear: 1990, sex: .female, restingHeartRate: 52)
        try store.savePerson(ann, creating: true)
        #expect(throws: HealthStoreError.self) { try store.savePerson(ann, creating: true) }
        #expect(throws: HealthStoreError.self) { try store.savePerson(Person(name: "bob"), creating: false) }
        var changed = ann
        changed.zoneMethod = .heartRateReserve
        changed.weightKilograms = 60
        try store.savePerson(changed, creating: false)
        try store.savePerson(Person(name: "Ä"), creating: true)
        try store.savePerson(Person(name: "Zed"), creating: true)
        #expect(try store.people() == [Person(name: "Zed"), changed, Person(name: "Ä")])
        try store.assignStrap(device: "strap-1", person: "ann", from: at(0), until: nil)
        try store.removePerson(named: "ann")
        #expect(try store.strapAssignments().isEmpty)
        #expect(throws: HealthStoreError.self) { try store.removePerson(named: "ann") }
        #expect(throws: HealthStoreError.self) { try store.assignStrap(device: "strap-1", person: "ann", from: at(0), until: nil) }
    }

    @Test("values no person has are refused before anything is written")
    func badValues() throws {
        let store = try Fixture.memoryStore()
        for person in [
            Person(name: ""), Person(name: " ann"), Person(name: "a\u{1B}[2J"), Person(name: String(repeating: "x", count: 65)),
            Person(name: "ann", birthYear: 1800), Person(name: "ann", weightKilograms: .nan), Person(name: "ann", restingHeartRate: 300),
            Person(name: "ann", restingHeartRate: 120, maximumHeartRate: 110),
        ] {
            #expect(throws: HealthStoreError.self, "\(person)") { try store.savePerson(person, creating: true) }
        }
        #expect(try store.people().isEmpty)
    }

    @Test("a new assignment hands the strap over at its start, and replaces the later ones it covers")
    func handover() throws {
        let store = try Fixture.memoryStore()
        for name in ["ann", "bob", "cy"] { try store.savePerson(Person(name: name), creating: true) }
        try store.assignStrap(device: "strap-1", person: "ann", from: at(0), until: nil)
        try store.assignStrap(device: "strap-1", person: "bob", from: at(2), until: at(4))
        try store.assignStrap(device: "strap-2", person: "cy", from: at(1), until: nil)
        #expect(try store.strapAssignments() == [
            StrapAssignment(device: "strap-1", person: "ann", from: at(0), until: at(2)),
            StrapAssignment(device: "strap-1", person: "bob", from: at(2), until: at(4)),
            StrapAssignment(device: "strap-2", person: "cy", from: at(1), until: nil),
        ])
        // cy from 3 to 5: bob's ends at 3; nothing starts inside.
        try store.assignStrap(device: "strap-1", person: "cy", from: at(3), until: at(5))
        // ann from 1 to 6 covers cy's whole, and cuts nothing after it.
        try store.assignStrap(device: "strap-1", person: "ann", from: at(1), until: at(6))
        #expect(try store.strapAssignments().filter { $0.device == "strap-1" } == [
            StrapAssignment(device: "strap-1", person: "ann", from: at(0), until: at(1)),
            StrapAssignment(device: "strap-1", person: "ann", from: at(1), until: at(6)),
        ])
        // bob from 5, open-ended: ann's ends at 5.
        try store.assignStrap(device: "strap-1", person: "bob", from: at(5), until: nil)
        // cy from 4 to 7 reaches into bob's, which then starts at 7.
        try store.assignStrap(device: "strap-1", person: "cy", from: at(4), until: at(7))
        #expect(try store.strapAssignments().filter { $0.device == "strap-1" } == [
            StrapAssignment(device: "strap-1", person: "ann", from: at(0), until: at(1)),
            StrapAssignment(device: "strap-1", person: "ann", from: at(1), until: at(4)),
            StrapAssignment(device: "strap-1", person: "cy", from: at(4), until: at(7)),
            StrapAssignment(device: "strap-1", person: "bob", from: at(7), until: nil),
        ])
        #expect(throws: HealthStoreError.self) { try store.assignStrap(device: "strap-1", person: "ann", from: at(3), until: at(3)) }
        #expect(throws: HealthStoreError.self) { try store.assignStrap(device: "", person: "ann", from: at(3), until: nil) }
    }

    @Test("zones by each method, and none without what the method needs")
    func zoneBounds() throws {
        #expect(Person(name: "a", maximumHeartRate: 200).zoneBounds(in: 2026)?.lowers == [100, 120, 140, 160, 180])
        // Tanaka: 208 - 0.7 × 36 = 182.8, rounded.
        #expect(Person(name: "a", birthYear: 1990).estimatedMaximumHeartRate(in: 2026) == 183)
        #expect(Person(name: "a", restingHeartRate: 50, maximumHeartRate: 190, zoneMethod: .heartRateReserve).zoneBounds(in: 2026)?.lowers
            == [120, 134, 148, 162, 176])
        #expect(Person(name: "a", zoneMethod: .bounds([90, 110, 130, 150, 170])).zoneBounds(in: 2026)?.lowers == [90, 110, 130, 150, 170])
        #expect(Person(name: "a").zoneBounds(in: 2026) == nil)
        #expect(Person(name: "a", maximumHeartRate: 190, zoneMethod: .heartRateReserve).zoneBounds(in: 2026) == nil)
        #expect(throws: ModelError.self) { try ZoneMethod.parse("90,80,100,110,120") }
        #expect(try ZoneMethod.parse(ZoneMethod.bounds([90.5, 110, 130, 150, 170]).description) == .bounds([90.5, 110, 130, 150, 170]))
        var zones = HeartRateZones.Accumulator(bounds: try #require(ZoneBounds(lowers: [90, 110, 130, 150, 170])))
        zones.add(100, at: 0, device: "d")
        zones.add(180, at: 2, device: "d")
        #expect(zones.zones.zones.map(\.seconds) == [0, 2, 0, 0, 0, 1])
        #expect(zones.zones.zones.map(\.lower) == [0, 90, 110, 130, 150, 170])
    }
}
