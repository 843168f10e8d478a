import BlueZBackend
import SensorBackend
import SensorFrames
import TestSupport
import Testing

private let a = "AA:BB:CC:DD:EE:01"

/// A strap as the real bluetoothd 5.66 shows it, plus `extra` scenario keys: Connect answers
/// once the link is up, before the services are resolved.
private func strap566(_ extra: String) -> String {
    #"{"address": "\#(a)", "name": "Strap 01", "trusted": true, "location": 1, "battery": 87, "manufacturer": "Polar Electro Oy", "model": "H10", "firmware": "3.1.1", "notify_acquired": true, "connect_reply": "link"\#(extra)}"#
}

private extension Collected {
    /// Whether the strap at `address` was ever given up on (backing off until its next attempt).
    func backedOff(_ address: String) -> Bool {
        states(of: address).contains { if case .backingOff = $0 { true } else { false } }
    }
}

/// How hrmd copes with the orders in which bluetoothd announces a new connection, as the real
/// bluetoothd shows them with many straps connecting at once.
@Suite("BlueZ backend: the order of a connection's announcements", .serialized, .timeLimit(.minutes(HangBound.suiteMinutes)))
struct ConnectionOrderTests {
    /// bluetoothd's gdbus can send `ServicesResolved` before the InterfacesAdded of the GATT
    /// objects it made first (any message it sends flushes its held changes in the order their
    /// objects were first queued). The fake holds the objects back until it answers a call, or
    /// for far longer than any test waits: the strap must not be given up for want of its Heart
    /// Rate Measurement characteristic, and the location and device information are still read.
    @Test func servicesResolvedAheadOfTheirObjectsIsNotAStrapWithoutHeartRate() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap566(#", "gatt_late_s": 600"#)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed and read (the battery level comes last), or backing off") {
                try await h.subscribed(a) && !h.collected.reads(of: a, 0x2A19).isEmpty || h.collected.backedOff(a)
            }
            #expect(!h.collected.backedOff(a), "\(h.collected.statuses(of: a))")
            #expect(h.collected.reads(of: a, 0x2A38) == [[1]])
            #expect(h.collected.reads(of: a, 0x2A29) == [Array("Polar Electro Oy".utf8)])
            #expect(h.collected.reads(of: a, 0x2A19) == [[87]], "Battery1, held with the GATT objects, is seen too")
            try await h.fake.command("notify \(a) 0652")
            try await eventually("a notification") { h.collected.notifications(of: a) == [[0x06, 0x52]] }
        }
    }

    /// The same order caught halfway: the measurement's object came with `ServicesResolved`,
    /// the location's, the device information's and `Battery1` are still held. The strap is
    /// subscribed at once, and its reads still find them all.
    @Test func theReadsFindObjectsThatCameAfterServicesResolved() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap566(#", "gatt_late_s": 600, "gatt_early": ["180d", "2a37"]"#)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed and read") { try await h.subscribed(a) && !h.collected.reads(of: a, 0x2A19).isEmpty }
            #expect(h.collected.reads(of: a, 0x2A38) == [[1]])
            #expect(h.collected.reads(of: a, 0x2A29) == [Array("Polar Electro Oy".utf8)])
            #expect(h.collected.reads(of: a, 0x2A19) == [[87]])
            #expect(!h.collected.backedOff(a))
        }
    }

    /// bluetoothd 5.66 can leave `Connected: true` unannounced (it logs "Device … is already
    /// connected" when the kernel's event comes after the ATT channel's): the link is up and the
    /// services resolve, and the strap streams without waiting out the services timeout.
    @Test func aLinkWhoseConnectedIsNeverAnnouncedStreams() async throws {
        let harness = try await BlueZHarness(scenario: scenario(strap566(#", "connected_unannounced": true"#)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("subscribed") { try await h.subscribed(a) }
            try await h.fake.command("notify \(a) 0653")
            try await eventually("a notification") { h.collected.notifications(of: a) == [[0x06, 0x53]] }
            #expect(!h.collected.backedOff(a))
            #expect(try await h.counter(a, "connect_calls") == 1)
        }
    }

    /// The location, the device information and the battery level are asked all at once, and
    /// the strap is subscribed meanwhile (the fake answers each read three seconds after it was
    /// asked, the subscription at once, and streams as soon as it is subscribed). What the
    /// strap sends before the reads are in is held and follows them, so the first samples
    /// carry what they said.
    @Test func theStrapIsSubscribedWhileItsReadsAreInFlight() async throws {
        let extra = #", "read_delay_s": 3, "battery": null, "battery_gatt": 90, "hardware": "HW1", "software": "SW1", "auto_stream_hz": 20"#
        let harness = try await BlueZHarness(scenario: scenario(strap566(extra)))
        try await harness.withBackend(addresses: [a]) { h in
            try await eventually("read (the battery level comes last) and notified") {
                !h.collected.reads(of: a, 0x2A19).isEmpty && !h.collected.notifications(of: a).isEmpty
            }
            #expect(try await h.counter(a, "most_reads_in_flight") == 7, "location, five device information strings, battery")
            #expect(try await h.counter(a, "reads_answered_when_subscribed") == 0, "the subscription did not wait for the reads")
            let frames = h.collected.frames(of: a)
            let reads = frames.filter { $0.kind == .read }.compactMap { $0.characteristic?.rawValue }
            #expect(reads == [0x2A38, 0x2A29, 0x2A24, 0x2A27, 0x2A26, 0x2A28, 0x2A19])
            let firstNotification = try #require(frames.firstIndex { $0.kind == .notify })
            let lastRead = try #require(frames.lastIndex { $0.kind == .read })
            #expect(lastRead < firstNotification, "the reads reach the sink first")
            #expect(frames[firstNotification].time < frames[lastRead].time, "a notification that came during the reads was held")
        }
    }
}
