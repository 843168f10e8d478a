import CentralStore
import CentralSync
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import Logging
import Secrets
import TestSupport
import Testing
import Timestamps

/// The lines a logger printed, for waiting on them.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var logger: Logger { Logger(label: "test.sync") { _ in Handler(lines: self) } }

    func append(_ line: String) { lock.withLock { lines.append(line) } }

    func contains(_ text: String) -> Bool { lock.withLock { lines.contains { $0.contains(text) } } }

    struct Handler: LogHandler {
        let lines: LogLines
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.append(event.message.description) }
    }
}

@Suite("hrmd's sync service")
struct SyncServiceTests {
    @Test("only what hrmd/sync may read leaves; a grant sends the history, a revoke stops the type, a deletion follows")
    func followsAuthorization() async throws {
        let fixture = try await CentralFixture()
        try fixture.createSchema()
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("gateway.sqlite"), mode: .createIfMissing)
        try store.setAuthorization(.sharingAuthorized, for: .share, source: "hrmd", type: .heartRate)
        func save(_ count: Int, from first: Int64) throws {
            let samples = try (0..<count).map { index in
                let time = Timestamp(microsecondsSinceEpoch: first + Int64(index) * 250_000)
                return try QuantitySample(
                    type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: Double(70 + index % 20)), start: time, end: time,
                    device: HealthDevice(localIdentifier: "mock-1"))
            }
            _ = try store.save(samples, from: HealthSource(name: "hrmd"))
        }
        try save(100, from: Samples.base)
        let settings = SyncSettings(
            connectionString: Secret(fixture.server.conninfo(user: "gw1", database: "hrmd")), gateway: "room1", batchSize: 30,
            timeout: .seconds(5), retryMaximum: .seconds(1))
        let log = LogLines()
        let service = SyncService(settings: settings, store: store, logger: log.logger)
        let running = Task { try await service.run() }
        defer { running.cancel() }
        // Not allowed: the read request is recorded, the log says how to grant it, nothing leaves.
        try await eventually("the grant hint") { log.contains("hrmctl auth grant hrmd/sync heart-rate --read") }
        #expect(try store.authorizations().contains { $0.source == SyncService.source })
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples") == 0)
        // Allowed: the history goes, in batches of 30.
        try store.setAuthorization(.sharingAuthorized, for: .read, source: SyncService.source, type: .heartRate)
        try save(10, from: Samples.base + 100_000_000)
        try await eventually("110 samples centrally") { try fixture.count("SELECT count(*) FROM hrmd.samples") == 110 }
        #expect(try fixture.count("SELECT batches FROM hrmd.cursor") >= 4)
        // A deletion follows as a tombstone.
        _ = try store.deleteSamples(of: .heartRate, source: "hrmd", since: Timestamp(microsecondsSinceEpoch: Samples.base + 100_000_000))
        try await eventually("the deletion") { try fixture.count("SELECT count(*) FROM hrmd.tombstone") == 10 }
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples") == 100)
        // Revoked: new samples stay here. The pass that logs the revoke came after the save.
        try store.setAuthorization(.sharingDenied, for: .read, source: SyncService.source, type: .heartRate)
        try save(5, from: Samples.base + 200_000_000)
        try await eventually("the revoke noticed") { log.contains("may no longer read heart-rate") }
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples") == 100)
        running.cancel()
        _ = try? await running.value
    }
}
