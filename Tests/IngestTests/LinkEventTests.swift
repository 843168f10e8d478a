import Foundation
import GRDB
import HealthModel
import HealthStore
import Logging
import SensorFrames
import TestSupport
import Testing
import Timestamps

@testable import Ingest

@Suite("strap-disconnected events through ingest: live by the tick, replayed by the frames, resumed after a restart")
struct LinkEventTests {
    let store: HealthStore
    static let strap = SensorID("AA:BB:CC:DD:EE:FF")

    init() throws {
        store = try HealthStore(writer: DatabaseQueue())
        for type in [SampleType.heartRate, .strapDisconnected] {
            try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: type)
        }
    }

    static func at(_ seconds: Int64) -> Timestamp { Timestamp(microsecondsSinceEpoch: 1_795_168_800_000_000 + seconds * 1_000_000) }
    static func frame(_ kind: FrameKind, _ seconds: Int64) -> SensorFrame {
        kind == .notify
            ? SensorFrame(time: at(seconds), transport: .ble, device: strap, kind: .notify, characteristic: .heartRateMeasurement, value: [0x06, 70])
            : SensorFrame(time: at(seconds), transport: .ble, device: strap, kind: kind)
    }

    func ingestor() -> FrameIngestor {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return FrameIngestor(store: store, settings: IngestSettings(source: HealthSource(name: "hrmd")), logger: logger)
    }

    func disconnections() throws -> [HealthEvent] {
        try store.events(EventQuery(types: [.strapDisconnected]))
    }

    @Test("live: open once the tick passes the rule's time with the strap away, closed by its return; a short drop makes nothing")
    func live() throws {
        var ingest = ingestor()
        for frame in [Self.frame(.connected, 0), Self.frame(.notify, 1), Self.frame(.disconnected, 2), Self.frame(.connected, 20)] {
            ingest.accept(frame)
        }
        ingest.tick(now: Self.at(200))
        #expect(try disconnections().isEmpty, "back after 18 s")
        ingest.accept(Self.frame(.disconnected, 300))
        ingest.tick(now: Self.at(359))
        #expect(try disconnections().isEmpty)
        ingest.tick(now: Self.at(360))
        let open = try disconnections()
        #expect(open.count == 1 && open.first?.end == nil && open.first?.start == Self.at(300) && open.first?.threshold == 60, "\(open)")
        #expect(open.first?.source == "hrmd" && open.first?.device == Self.strap.rawValue)
        ingest.accept(Self.frame(.connected, 500))
        let closed = try disconnections()
        #expect(closed.count == 1 && closed.first?.end == Self.at(500) && closed.first?.id == open.first?.id, "\(closed)")
    }

    @Test("replayed frames give the live run's event; a link still down at the recording's end gives none")
    func replayed() throws {
        var ingest = ingestor()
        for frame in [Self.frame(.connected, 0), Self.frame(.disconnected, 300), Self.frame(.connected, 500), Self.frame(.notify, 501),
                      Self.frame(.disconnected, 600)] {
            ingest.accept(frame)
        }
        ingest.finish(closingEvents: true)
        let events = try disconnections()
        #expect(events.map(\.start) == [Self.at(300)] && events.first?.end == Self.at(500), "\(events)")
    }

    @Test("an event open when hrmd stops is closed by the strap's return in the next run, once")
    func acrossARestart() throws {
        var first = ingestor()
        first.accept(Self.frame(.disconnected, 0))
        first.tick(now: Self.at(100))
        first.finish()
        #expect(try disconnections().first?.end == nil)
        var second = ingestor()
        second.accept(Self.frame(.connected, 1000))
        let events = try disconnections()
        #expect(events.count == 1 && events.first?.end == Self.at(1000), "\(events)")
    }
}
