import Foundation
import HealthModel
import LiveFeed
import Testing
import Timestamps

@testable import MQTTPublisher

@Suite("Workout states and their Home Assistant entities")
struct WorkoutPublisherTests {
    let layout = MQTTLayout(topicPrefix: "hrmd", discoveryPrefix: "homeassistant", gateway: "gw", publishesRRIntervals: false, version: "0.1.0")
    let start = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)

    func workout(_ id: String = "w1", person: String? = "ann", device: String? = nil, events: [WorkoutEvent] = [], end: Double? = nil) -> Workout {
        Workout(
            id: id, source: "root/hrmctl", person: person, device: device, activity: .rowing, start: start,
            end: end.map { start.advanced(bySeconds: $0) }, events: events)
    }

    func payload(_ message: MosquittoMessage) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    @Test("topics: a person's under person/NAME, a strap's under its device level; ids of their own")
    func topics() {
        #expect(layout.workoutTopic(.person("ann")) == "hrmd/gw/person/ann/workout")
        #expect(layout.workoutTopic(.person("Ann Lee")).hasPrefix("hrmd/gw/person/ann_lee~"))
        #expect(layout.workoutTopic(.device("AA:BB:CC:DD:EE:FF")) == "hrmd/gw/aa-bb-cc-dd-ee-ff/workout")
        #expect(layout.workoutOwnerID(.person("ann")) == "hrmd_gw_person_ann")
        #expect(layout.workoutOwnerID(.device("mock-1")) == "hrmd_gw_mock-1")
        let topics = layout.workoutDiscoveryMessages(.person("ann")).map(\.topic)
        #expect(topics == ["homeassistant/sensor/hrmd_gw_person_ann/workout/config", "homeassistant/sensor/hrmd_gw_person_ann/workout_elapsed/config"])
    }

    @Test("a workout's life: discovered once, then active, paused, ended, each retained; elapsed moves with the ticks")
    func life() throws {
        var publisher = WorkoutPublisher(layout: layout, publishesDiscovery: true)
        let first = publisher.messages(for: .changed(workout()), now: start.advanced(bySeconds: 30))
        #expect(first.count == 3, "two documents and the state")
        #expect(first.allSatisfy { $0.retain })
        #expect(try payload(first[2])["state"] as? String == "active")
        #expect(try payload(first[2])["elapsed"] as? Double == 30)
        let document = try payload(first[0])
        #expect(document["value_template"] as? String == "{{ value_json.state }}")
        #expect((document["device"] as? [String: Any])?["name"] as? String == "ann")
        let paused = publisher.messages(for: .changed(workout(events: [WorkoutEvent(.pause, at: start.advanced(bySeconds: 40))])), now: start.advanced(bySeconds: 41))
        #expect(paused.count == 1)
        #expect(try payload(paused[0])["state"] as? String == "paused")
        #expect(try payload(publisher.tick(now: start.advanced(bySeconds: 50))[0])["elapsed"] as? Double == 50)
        let ended = publisher.messages(for: .changed(workout(end: 60)), now: start.advanced(bySeconds: 90))
        #expect(try payload(ended[0])["state"] as? String == "ended")
        #expect(try payload(ended[0])["elapsed"] as? Double == 60, "the end, not now")
        #expect(publisher.tick(now: start.advanced(bySeconds: 100)).isEmpty, "an ended workout does not tick")
        let deleted = publisher.messages(for: .deleted(id: "w1"), now: start)
        #expect(deleted.map { String(decoding: $0.payload, as: UTF8.self) } == [#"{"state":"none"}"#])
        #expect(publisher.messages(for: .deleted(id: "unknown"), now: start).isEmpty)
    }

    @Test("an older workout entered after a newer one does not replace it")
    func older() {
        var publisher = WorkoutPublisher(layout: layout, publishesDiscovery: false)
        _ = publisher.messages(for: .changed(workout("new")), now: start)
        var old = workout("old", end: -100)
        old.start = start.advanced(bySeconds: -200)
        #expect(publisher.messages(for: .changed(old), now: start).isEmpty)
        #expect(publisher.latest[.person("ann")]?.id == "new")
    }

    @Test("past 128 owners the one whose workout ended longest ago is forgotten, its retained messages cleared")
    func bounded() {
        var publisher = WorkoutPublisher(layout: layout, publishesDiscovery: true)
        for index in 0..<WorkoutPublisher.maximumOwners {
            _ = publisher.messages(for: .changed(workout("w\(index)", person: "p\(index)", end: Double(index + 1))), now: start)
        }
        let messages = publisher.messages(for: .changed(workout("extra", person: "extra")), now: start)
        let cleared = messages.filter { $0.payload.isEmpty }
        #expect(cleared.count == 3, "the state and two documents")
        #expect(cleared.allSatisfy { $0.retain && $0.topic.contains("p0") })
        #expect(publisher.latest.count == WorkoutPublisher.maximumOwners)
        #expect(publisher.latest[.person("p0")] == nil)
    }
}
