import BlueZBackend
import SensorBackend
import SensorFrames
import TestSupport
import Testing

private let a = "AA:BB:CC:DD:EE:01"
private let b = "AA:BB:CC:DD:EE:02"
private let c = "AA:BB:CC:DD:EE:03"

private func strap(_ address: String, _ extra: String = "") -> String {
    #"{"address": "\#(address)", "name": "Strap \#(address.suffix(2))", "trusted": true, "location": 1, "battery": 87, "manufacturer": "Polar Electro Oy", "model": "H10", "firmware": "3.1.1", "notify_acquired": true\#(extra)}"#
}

@Suite("BlueZ backend against the fake bluetoothd", .serialized, .timeLimit(.minutes(HangBound.suiteMinutes)))
struct BlueZSensorsTests {
    @Test func acquireNotifyPathReadsThenStreams() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            try await h.fake.command("notify \(a) 164a0004")
            try await eventually("one notification") { h.collected.notifications(of: a) == [[0x16, 0x4a, 0x00, 0x04]] }
            #expect(h.collected.reads(of: a, 0x2A38) == [[1]])
            #expect(h.collected.reads(of: a, 0x2A29) == [Array("Polar Electro Oy".utf8)])
            #expect(h.collected.reads(of: a, 0x2A24) == [Array("H10".utf8)])
            #expect(h.collected.reads(of: a, 0x2A19) == [[87]])
            #expect(h.collected.count(of: a, .connected) == 1)
            #expect(try await h.counter(a, "acquire_notify_calls") == 1)
            #expect(try await h.counter(a, "start_notify_calls") == 0)
            #expect(h.collected.states(of: a).contains(.streaming))
            #expect(h.collected.states(of: a).first == .connecting)
        }
        #expect(harness.collected.count(of: a, .disconnected) == 1)
    }

    @Test func startNotifyPathStreamsPropertyValues() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a, #", "notify_acquired": false"#)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            try await h.fake.command("notify \(a) 0648")
            try await h.fake.command("notify \(a) 0649")
            try await eventually("two notifications") { h.collected.notifications(of: a) == [[0x06, 0x48], [0x06, 0x49]] }
            #expect(try await h.counter(a, "start_notify_calls") == 1)
            #expect(try await h.counter(a, "acquire_notify_calls") == 0)
        }
    }

    @Test func aDropReconnectsWithoutDuplicatesOrLoss() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            try await h.fake.command("notify \(a) 0640")
            try await eventually("first") { h.collected.notifications(of: a).count == 1 }
            try await h.fake.command("drop \(a)")
            try await eventually("disconnected frame") { h.collected.count(of: a, .disconnected) == 1 }
            try await eventually("subscribed again") { try await h.subscribed(a) && h.collected.count(of: a, .connected) == 2 }
            try await h.fake.command("notify \(a) 0641")
            try await eventually("second") { h.collected.notifications(of: a).count == 2 }
            // A negative check, made once a later notification came: a duplicate would be before it.
            try await h.fake.command("notify \(a) 06ff")
            try await eventually("the later notification") { h.collected.notifications(of: a).last == [0x06, 0xff] }
            #expect(h.collected.notifications(of: a).dropLast() == [[0x06, 0x40], [0x06, 0x41]])
            #expect(try await h.counter(a, "acquire_notify_calls") == 2)
            #expect(h.collected.states(of: a).contains { if case .backingOff = $0 { true } else { false } })
        }
    }

    @Test func aStartNotifyStrapReconnectsWithOneSubscription() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a, #", "notify_acquired": false"#)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            try await h.fake.command("drop \(a)")
            try await eventually("subscribed again") { try await h.subscribed(a) && h.collected.count(of: a, .connected) == 2 }
            try await h.fake.command("notify \(a) 0642")
            try await eventually("one notification") { h.collected.notifications(of: a).count == 1 }
            // A negative check, made once a later notification came: a second subscription's copy
            // of the first would be before it (and the later one would come twice).
            try await h.fake.command("notify \(a) 06ff")
            try await eventually("the later notification") { h.collected.notifications(of: a).last == [0x06, 0xff] }
            #expect(h.collected.notifications(of: a).dropLast() == [[0x06, 0x42]])
        }
    }

    @Test func followsABluetoothdRestart() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            h.fake.kill()
            try await eventually("bluetoothd not running") {
                h.collected.states(of: a).contains(.waiting(reason: "bluetoothd not running"))
            }
            #expect(h.collected.count(of: a, .disconnected) == 1)
            try await h.restartBluetoothd()
            try await eventually("subscribed to the new bluetoothd") { try await h.subscribed(a) }
            try await h.fake.command("notify \(a) 0643")
            try await eventually("a notification after the restart") { h.collected.notifications(of: a) == [[0x06, 0x43]] }
        }
    }

    @Test func twoStrapsAtOnceAndAMalformedOneDisturbsNoOther() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a), strap(b, #", "notify_acquired": false"#)))
        try await harness.withBackend { h in  // trusted straps
            try await eventually("both subscribed") { let first = try await h.subscribed(a); let second = try await h.subscribed(b); return first && second }
            try await h.fake.command("malformed \(a) 5")
            try await h.fake.command("notify \(b) 0650")
            try await h.fake.command("notify \(a) 0651")
            try await eventually("both notified") {
                h.collected.notifications(of: b) == [[0x06, 0x50]] && h.collected.notifications(of: a).last == [0x06, 0x51]
            }
            #expect(h.collected.count(of: a, .connected) == 1, "malformed frames do not end the connection")
        }
    }

    @Test func anUntrustedStrapIsIgnoredUnlessAnyStrap() async throws {
        let stranger = #"{"address": "\#(c)", "name": "Neighbour", "discoverable": true, "notify_acquired": true}"#
        let harness = try await BlueZHarness(scenario: scenario(strap(a), stranger))
        try await harness.withBackend { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            // A negative check, made once a trusted strap that appeared after the stranger is
            // streaming: the backend has dealt with the stranger by then.
            try await h.fake.command("add-device \(strap(b))")
            try await eventually("the later strap subscribed") { try await h.subscribed(b) }
            #expect(try await h.counter(c, "connect_calls") == 0)
            #expect(h.collected.frames(of: c).isEmpty)
        }
        let alone = try await BlueZHarness(scenario: scenario(stranger))
        try await alone.withBackend(anyStrap: true) { h in
            try await eventually("the stranger subscribed with --any-strap") { try await h.subscribed(c) }
        }
    }

    @Test func discoversAListedStrapThenStopsDiscovering() async throws {
        let unknown = #"{"address": "\#(c)", "name": "New strap", "discoverable": true, "location": 1, "notify_acquired": true}"#
        let harness = try await BlueZHarness(scenario: scenario(unknown))
        try await harness.withBackend(addresses: [c]) { h in
            try await eventually("subscribed after discovery") { try await h.subscribed(c) }
            let stats = try await h.fake.stats()
            #expect(stats["start_discovery_calls"] as? Int ?? 0 >= 1)
            let filter = stats["discovery_filter"] as? [String: Any]
            #expect(filter?["Transport"] as? String == "le")
            #expect(filter?["UUIDs"] as? [String] == ["0000180d-0000-1000-8000-00805f9b34fb"])
            try await eventually("discovery stopped") { try await h.fake.stats()["discovering"] as? Bool == false }
            #expect(h.collected.states(of: c).contains(.searching))
        }
    }

    @Test func adapterPowerOffIsWaitedOut() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            try await h.fake.command("power off")
            try await eventually("waiting for the adapter") {
                h.collected.states(of: a).contains(.waiting(reason: "adapter powered off"))
            }
            try await h.fake.command("power on")
            try await eventually("subscribed again") { try await h.subscribed(a) && h.collected.count(of: a, .connected) == 2 }
        }
    }

    @Test func anAdapterThatGoesAwayIsWaitedFor() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            try await h.fake.command("remove-adapter")
            try await eventually("waiting for an adapter") { h.collected.states(of: a).contains(.waiting(reason: "no adapter")) }
            #expect(h.collected.count(of: a, .disconnected) == 1)
            try await h.fake.command("add-adapter")
            try await eventually("subscribed on the returned adapter") {
                try await h.subscribed(a) && h.collected.count(of: a, .connected) == 2
            }
            try await h.fake.command("notify \(a) 0644")
            try await eventually("a notification") { h.collected.notifications(of: a) == [[0x06, 0x44]] }
        }
    }

    @Test func failedConnectsBackOffThenSucceed() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a, #", "connect_failures": 2"#)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            let reasons = h.collected.states(of: a).compactMap { state -> String? in
                if case .backingOff(_, let reason) = state { reason } else { nil }
            }
            #expect(reasons.count == 2)
            #expect(reasons.first?.contains("aborted by this adapter") == true)
            #expect(h.collected.count(of: a, .connected) == 1)
        }
    }

    @Test func linksEndingAtTheSameAgeGetANoteThatABluetoothdRestartClears() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap(a, #", "drop_after_s": 0.4"#)))
        let diagnosis = LinkAgeDiagnosis(minimumLinks: 3, shortestLink: .milliseconds(100))
        try await harness.withBackend(addresses: [a], linkAgeDiagnosis: diagnosis) { h in
            try await eventually("a note") { h.collected.statuses(of: a).contains { $0.note != nil } }
            let statuses = h.collected.statuses(of: a)
            let first = try #require(statuses.firstIndex { $0.note != nil })
            let note = try #require(statuses[first].note)
            #expect(note.hasPrefix("the last 3 links each ended about "), "\(note)")
            #expect(note.contains("MaxConnectionInterval") && note.contains("/etc/bluetooth/main.conf"), "\(note)")
            #expect(statuses[first].state.name == "backing-off", "the note rides on the report after the third drop")
            let earlierDrops = statuses[..<first].count { $0.state.name == "backing-off" }
            #expect(earlierDrops == 2, "two drops before it say nothing")
            #expect(h.collected.count(of: a, .disconnected) >= 3)
            try await eventually("the next link reported with the note") {
                h.collected.statuses(of: a).dropFirst(first + 1).contains { $0.state == .streaming && $0.note == note }
            }

            try await h.restartBluetoothd()
            func firstConnectAfterTheRestart() -> SensorStatus? {
                let after = h.collected.statuses(of: a)
                guard let gone = after.lastIndex(where: { $0.state == .waiting(reason: "bluetoothd not running") }) else { return nil }
                return after[gone...].first { $0.state == .connecting }
            }
            try await eventually("a connection to the new bluetoothd") { firstConnectAfterTheRestart() != nil }
            #expect(firstConnectAfterTheRestart()?.note == nil, "a new bluetoothd (new settings, perhaps) starts afresh")
        }
    }

    @Test func noBusIsWaitedOut() async throws {
        let directory = try TemporaryDirectory(prefix: "hrmd-nobus")
        let collected = Collected()
        let backend = BlueZSensors(settings: .init(
            addresses: [a], backoff: Backoff(initial: .milliseconds(50), maximum: .milliseconds(200)),
            busAddress: "unix:path=\(directory.file("missing"))"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await backend.run(into: collected.sink) }
            try await eventually("a state") { !collected.states(of: a).isEmpty }
            group.cancelAll()
            try await group.waitForAll()
        }
        let state = try #require(collected.states(of: a).first)
        #expect(state.name == "waiting")
        #expect(state.detail?.hasPrefix("no system bus") == true)
    }
}
