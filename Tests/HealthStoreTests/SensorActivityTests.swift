import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Sensor activity records")
struct SensorActivityTests {
    @Test("a replace keeps exactly the given rows; unknown values stay unknown; battery is clamped")
    func replaceAndRead() throws {
        let store = try Fixture.memoryStore()
        let time = Fixture.base
        let first = [
            SensorActivity(identifier: "ble", transport: "ble", state: "waiting", detail: "no adapter", since: time, updatedAt: time),
            SensorActivity(
                identifier: "AA:BB:CC:DD:EE:FF", transport: "ble", state: "streaming", since: time, battery: 140,
                lastFrame: time.advanced(bySeconds: 2), frames: 9, skipped: 1, updatedAt: time.advanced(bySeconds: 3)),
        ]
        try store.replaceSensorActivity(first)
        let read = try store.sensorActivity()
        #expect(read.map(\.identifier) == ["AA:BB:CC:DD:EE:FF", "ble"])
        #expect(read[0].battery == 100)
        #expect(read[0].lastFrame == time.advanced(bySeconds: 2) && read[0].frames == 9 && read[0].skipped == 1)
        #expect(read[1].detail == "no adapter" && read[1].battery == nil && read[1].lastFrame == nil)

        try store.replaceSensorActivity([first[0]])
        #expect(try store.sensorActivity().map(\.identifier) == ["ble"])
        try store.replaceSensorActivity([])
        #expect(try store.sensorActivity().isEmpty)
    }
}
