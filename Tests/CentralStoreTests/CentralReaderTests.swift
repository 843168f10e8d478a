import CentralStore
import CommandSupport
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import PostgresClient
import StoreTransport
import TestSupport
import Testing
import Timestamps

/// Samples written through `CentralGateway` (two gateways, devices, sources, a synced
/// sample, tombstones) and read back with `CentralReader`, against a PostgreSQL of the test's own.
@Suite("Reading the central store", .timeLimit(.minutes(3)))
struct CentralReaderTests {
    /// 2026-11-20T10:20:00Z: the samples cross UTC hours and, in the zone used, a local day.
    static let base: Int64 = 1_795_170_000_000_000

    struct Written: Equatable, Hashable, CustomStringConvertible {
        var start: Int64
        var value: Double
        var device: String?
        var source: String
        var gateway: String
        var id: Int64
        var description: String { "\(start) \(value) \(device ?? "-") \(source) \(gateway) \(id)" }
    }

    static func heartRate(_ micros: Int64, _ bpm: Double, device: String, location: HeartRateSensorLocation = .chest,
                          sync: (String, Int)? = nil) throws -> QuantitySample
    {
        let at = Timestamp(microsecondsSinceEpoch: micros)
        return try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: bpm), start: at, end: at,
            device: HealthDevice(localIdentifier: device, name: "strap \(device)", manufacturer: "acme"),
            metadata: SampleMetadata(sensorLocation: location, sensorContact: true, syncIdentifier: sync?.0, syncVersion: sync?.1))
    }

    /// Two gateways' batches: `a` hears strap-1 for 5000 s at 1 Hz, `b` strap-2 every 2 s
    /// over the same time; `a` also stores an imported sample under a sync identifier (two
    /// versions), and deletes three of its samples.
    static func populate(_ postgres: TemporaryPostgres) throws -> (expected: [Written], gateways: [String: Int32]) {
        let a = try CentralGateway(connection: try postgres.connect(), name: "a")
        let b = try CentralGateway(connection: try postgres.connect(), name: "b")
        defer { a.close(); b.close() }
        let hrmd = HealthSource(name: "hrmd", version: "0.1.0")
        var expected: [Written] = []
        var anchor: Int64 = 0
        var batchA: [StoredSample] = []
        for second in 0..<5000 {
            anchor += 1
            let value = Double(60 + (second * 7) % 90)
            let micros = base + Int64(second) * 1_000_000 + 250_000
            batchA.append(StoredSample(id: anchor, source: hrmd, sample: try heartRate(micros, value, device: "strap-1")))
            expected.append(.init(start: micros, value: value, device: "strap-1", source: "hrmd", gateway: "a",
                                  id: CentralReader.sampleID(gateway: a.id, anchor: anchor)))
        }
        let importer = HealthSource(name: "importer")
        anchor += 1
        let old = try heartRate(base + 1_000_000_000, 99, device: "watch", location: .wrist, sync: ("x", 1))
        batchA.append(StoredSample(id: anchor, source: importer, sample: old))
        // Sent in two batches: the second appends to the first's open chunks.
        _ = try a.apply(SyncBatch(type: .heartRate, from: 0, to: 3000, added: Array(batchA.prefix(3000)), deleted: []))
        _ = try a.apply(SyncBatch(type: .heartRate, from: 3000, to: anchor, added: Array(batchA.dropFirst(3000)), deleted: []))
        anchor += 1
        let newer = try heartRate(base + 1_000_500_000, 101, device: "watch", location: .wrist, sync: ("x", 2))
        let deleted = [10, 2000, 4999].map { DeletedSample(id: Int64($0), type: .heartRate, source: "hrmd", anchor: anchor + Int64($0)) }
        _ = try a.apply(SyncBatch(
            type: .heartRate, from: batchA.last!.id, to: anchor + 5000,
            added: [StoredSample(id: anchor, source: importer, sample: newer)], deleted: deleted))
        expected.removeAll { sample in deleted.contains { CentralReader.sampleID(gateway: a.id, anchor: $0.id) == sample.id } }
        expected.append(.init(start: base + 1_000_500_000, value: 101, device: "watch", source: "importer", gateway: "a",
                              id: CentralReader.sampleID(gateway: a.id, anchor: anchor)))
        var batchB: [StoredSample] = []
        for step in 0..<2500 {
            let value = Double(70 + step % 50)
            let micros = base + Int64(step) * 2_000_000 + 250_000
            batchB.append(StoredSample(id: Int64(step + 1), source: hrmd, sample: try heartRate(micros, value, device: "strap-2", location: .wrist)))
            expected.append(.init(start: micros, value: value, device: "strap-2", source: "hrmd", gateway: "b",
                                  id: CentralReader.sampleID(gateway: b.id, anchor: Int64(step + 1))))
        }
        _ = try b.apply(SyncBatch(type: .heartRate, from: 0, to: 2500, added: batchB, deleted: []))
        expected.sort { ($0.start, $0.id) < ($1.start, $1.id) }
        return (expected, ["a": a.id, "b": b.id])
    }

    static func written(_ samples: [StoredSample]) -> [Written] {
        samples.map {
            Written(start: $0.sample.start.microsecondsSinceEpoch, value: $0.sample.canonicalValue, device: $0.sample.device?.localIdentifier,
                    source: $0.source.name, gateway: $0.gateway ?? "?", id: $0.id)
        }
    }

    @Test("samples: exactly what the gateways wrote, merged by start then id, with range, device, source, limit and order")
    func samples() async throws {
        let postgres = try await TemporaryPostgres()
        let (expected, _) = try Self.populate(postgres)
        let reader = try CentralReader(connection: try postgres.connect(), timeZone: TimeZone(identifier: "Europe/Berlin")!)
        let all = try reader.samples(SampleQuery(type: .heartRate))
        #expect(Self.written(all) == expected)
        #expect(all.first { $0.sample.metadata.syncIdentifier == "x" }?.sample.metadata.syncVersion == 2)
        #expect(all.first { $0.sample.device?.localIdentifier == "strap-2" }?.sample.metadata.sensorLocation == .wrist)
        #expect(all.first?.sample.device?.name == "strap strap-1")
        let since = Timestamp(microsecondsSinceEpoch: Self.base + 1_234_000_000)
        let until = Timestamp(microsecondsSinceEpoch: Self.base + 3_999_000_000)
        let inRange = expected.filter { $0.start >= since.microsecondsSinceEpoch && $0.start < until.microsecondsSinceEpoch }
        #expect(Self.written(try reader.samples(SampleQuery(type: .heartRate, since: since, until: until))) == inRange)
        #expect(Self.written(try reader.samples(SampleQuery(type: .heartRate, since: since, until: until, newestFirst: true)))
            == inRange.reversed())
        #expect(Self.written(try reader.samples(SampleQuery(type: .heartRate, since: since, limit: 7, newestFirst: true)))
            == Array(expected.filter { $0.start >= since.microsecondsSinceEpoch }.reversed().prefix(7)))
        #expect(Self.written(try reader.samples(SampleQuery(type: .heartRate, device: "strap-2", limit: 100)))
            == Array(expected.filter { $0.device == "strap-2" }.prefix(100)))
        #expect(Self.written(try reader.samples(SampleQuery(type: .heartRate, source: "importer"))) == expected.filter { $0.source == "importer" })
        #expect(try reader.samples(SampleQuery(type: .rrInterval)).isEmpty)
        #expect(try reader.samples(SampleQuery(type: .heartRate, device: "nobody")).isEmpty)
    }

    @Test("statistics per minute, hour and local day equal a straightforward computation", arguments: ["Europe/Berlin", "Asia/Kolkata"])
    func statistics(zoneName: String) async throws {
        let postgres = try await TemporaryPostgres()
        let (expected, _) = try Self.populate(postgres)
        let zone = TimeZone(identifier: zoneName)!
        let reader = try CentralReader(connection: try postgres.connect(), timeZone: zone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let since = Timestamp(microsecondsSinceEpoch: Self.base + 1_000_000_123)
        for (bucket, range) in [(StatisticsBucket.seconds(60), false), (.seconds(3600), false), (.seconds(300), true), (.days(zone), false), (.days(zone), true)] {
            func key(_ micros: Int64) -> Int64 {
                switch bucket {
                case .seconds(let width): return Int64((Double(micros) / 1e6 / Double(width)).rounded(.down)) * width
                case .days: return Int64(calendar.startOfDay(for: Date(timeIntervalSince1970: Double(micros) / 1e6)).timeIntervalSince1970)
                }
            }
            var totals: [Int64: (count: Int, min: Double, max: Double, sum: Double)] = [:]
            for sample in expected where !range || sample.start >= since.microsecondsSinceEpoch {
                let total = totals[key(sample.start)] ?? (0, .infinity, -.infinity, 0)
                totals[key(sample.start)] = (total.count + 1, min(total.min, sample.value), max(total.max, sample.value), total.sum + sample.value)
            }
            let buckets = try reader.statistics(of: .heartRate, by: bucket, since: range ? since : nil)
            #expect(buckets.map { $0.start.microsecondsSinceEpoch / 1_000_000 } == totals.keys.sorted(), "\(bucket)")
            for value in buckets {
                guard let total = totals[value.start.microsecondsSinceEpoch / 1_000_000] else { continue }
                #expect(value.count == total.count && value.minimum == total.min && value.maximum == total.max, "\(bucket) \(value)")
                #expect(abs(value.sum - total.sum) < 1e-6)
                if case .seconds(let width) = bucket {
                    #expect(value.end.microsecondsSinceEpoch - value.start.microsecondsSinceEpoch == width * 1_000_000)
                } else {
                    let end = calendar.date(byAdding: .day, value: 1, to: Date(timeIntervalSince1970: value.start.secondsSinceEpoch))!
                    #expect(value.end.secondsSinceEpoch == end.timeIntervalSince1970)
                }
            }
        }
        #expect(try reader.statistics(of: .rrInterval, by: .seconds(60)).isEmpty)
    }

    @Test("devices and sources: counts, last seen and location over both gateways")
    func inventory() async throws {
        let postgres = try await TemporaryPostgres()
        let (expected, _) = try Self.populate(postgres)
        let reader = try CentralReader(connection: try postgres.connect())
        let devices = try reader.deviceSummaries()
        #expect(devices.map(\.device.localIdentifier) == ["strap-1", "strap-2", "watch"])
        for summary in devices {
            let mine = expected.filter { $0.device == summary.device.localIdentifier }
            #expect(summary.sampleCount == mine.count)
            #expect(summary.lastSeen?.microsecondsSinceEpoch == mine.map(\.start).max())
        }
        #expect(devices.map(\.lastLocation) == [.chest, .wrist, .wrist])
        #expect(devices[0].device.manufacturer == "acme")
        let sources = try reader.sourceSummaries()
        #expect(sources.map(\.source.name) == ["hrmd", "importer"])
        #expect(sources.map(\.sampleCount) == [expected.filter { $0.source == "hrmd" }.count, 1])
        #expect(sources[0].source.version == "0.1.0")
    }

    @Test("changes: after a notification, exactly the samples appended since, and the tombstones")
    func changes() async throws {
        let postgres = try await TemporaryPostgres()
        let (_, gateways) = try Self.populate(postgres)
        let reader = try CentralReader(connection: try postgres.connect())
        try reader.listenForChanges()
        var position = try reader.currentPosition(of: .heartRate)
        #expect(try reader.changes(after: &position).added.isEmpty)
        let b = try CentralGateway(connection: try postgres.connect(), name: "b")
        defer { b.close() }
        let hrmd = HealthSource(name: "hrmd", version: "0.1.0")
        let later = Self.base + 5_000_000_000 + 250_000
        let added = try (0..<3).map { StoredSample(id: Int64(2501 + $0), source: hrmd, sample: try Self.heartRate(later + Int64($0) * 2_000_000, 80, device: "strap-2", location: .wrist)) }
        _ = try b.apply(SyncBatch(type: .heartRate, from: 2500, to: 2503, added: added, deleted: [
            DeletedSample(id: 1, type: .heartRate, source: "hrmd", anchor: 2504),
        ]))
        #expect(try reader.awaitChanges(upTo: .seconds(5)))
        let changes = try reader.changes(after: &position)
        #expect(changes.added.map(\.id) == (2501...2503).map { CentralReader.sampleID(gateway: gateways["b"]!, anchor: Int64($0)) })
        #expect(changes.added.allSatisfy { $0.gateway == "b" && $0.sample.device?.localIdentifier == "strap-2" })
        #expect(changes.deleted.map(\.id) == [CentralReader.sampleID(gateway: gateways["b"]!, anchor: 1)])
        #expect(changes.deleted.first?.source == "hrmd")
        let again = try reader.changes(after: &position)
        #expect(again.added.isEmpty && again.deleted.isEmpty)
        #expect(try !reader.awaitChanges(upTo: .milliseconds(100)))
    }

    @Test("CentralTransport: writes are a one-line usage failure; an unreachable database is exit 69")
    func access() async throws {
        let postgres = try await TemporaryPostgres()
        _ = try Self.populate(postgres)
        let access = try CentralTransport.connect(Self.uri(postgres))
        #expect(access.showsGateways)
        do {
            _ = try await access.deleteSamples(of: .heartRate, source: "hrmd", since: nil, until: nil)
            Issue.record("delete succeeded")
        } catch {
            #expect(error.status == .usage && error.message.contains("read-only") && !error.message.contains("\n"))
        }
        await #expect(throws: CommandFailure.self) { try await access.authorizations() }
        var seen = 0
        try await access.followChanges(of: .heartRate, pollInterval: 0.1, until: .now.advanced(by: .milliseconds(300))) { _ in seen += 1 }
        #expect(seen == 0)
        let port = postgres.port
        postgres.stop()
        do {
            _ = try CentralTransport.connect("postgresql://postgres@127.0.0.1:\(port)/postgres")
            Issue.record("connected to a stopped server")
        } catch {
            #expect(error.status == .unavailable && !error.message.contains("\n"))
        }
        #expect(StoreLocation(flag: "service=central").centralConninfo == "service=central")
        #expect(StoreLocation(flag: "postgres://h/db").centralConninfo == "postgres://h/db")
        #expect(StoreLocation(flag: "./postgresql.sqlite").centralConninfo == nil)
        #expect(StoreLocation.redacted("postgresql://me:secret@host/db") == "postgresql://me@host/db")
        #expect(StoreLocation.redacted("postgres://me@host:5433/db?passw%6Frd=secret&sslmode=require") == "postgres://me@host:5433/db")
        #expect(StoreLocation.redacted("service=central password=secret") == "service=central")
        #expect(StoreLocation.redacted("/var/lib/hrmd/store.sqlite") == "/var/lib/hrmd/store.sqlite")
    }

    /// A libpq URI for the server's socket.
    static func uri(_ postgres: TemporaryPostgres) -> String {
        "postgresql:///postgres?host=\(postgres.directory.path)&port=\(postgres.port)&user=postgres"
    }
}
