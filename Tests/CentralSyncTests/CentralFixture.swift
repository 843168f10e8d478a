import CentralStore
import HealthModel
import HealthUnits
import PostgresClient
import TestSupport
import Timestamps

/// A PostgreSQL of the test's own with a database `hrmd` owned by `hrmd_owner`, gateway roles
/// `gw1` and `gw2` (members of `hrmd_gateway`) and an analyst `reader` (in `hrmd_analyst`),
/// set up as docs/central-store.md tells a site to.
struct CentralFixture {
    let server: TemporaryPostgres

    init() async throws {
        server = try await TemporaryPostgres()
        try server.psql("""
            CREATE ROLE hrmd_gateway NOLOGIN;
            CREATE ROLE hrmd_analyst NOLOGIN;
            CREATE ROLE hrmd_owner LOGIN;
            CREATE ROLE gw1 LOGIN IN ROLE hrmd_gateway;
            CREATE ROLE gw2 LOGIN IN ROLE hrmd_gateway;
            CREATE ROLE reader LOGIN IN ROLE hrmd_analyst;
            """)
        try server.psql("CREATE DATABASE hrmd OWNER hrmd_owner")
    }

    func connect(_ user: String, database: String = "hrmd") throws -> PostgresConnection {
        try server.connect(user: user, database: database)
    }

    /// The gateway `name` as `user`; the owner's first connection creates the schema.
    func gateway(_ name: String, as user: String) throws -> CentralGateway {
        try CentralGateway(connection: connect(user), name: name)
    }

    /// The schema made by its owner, as a site's first set-up does.
    func createSchema() throws {
        let owner = try connect("hrmd_owner")
        defer { owner.close() }
        _ = try CentralGateway(connection: owner, name: "setup")
    }

    /// Rows of a query as the superuser in `hrmd`.
    func rows(_ sql: String) throws -> PostgresResult { try server.execute(sql, database: "hrmd") }

    func count(_ sql: String) throws -> Int64 { try rows(sql).int64(0, 0) }
}

/// Samples as a gateway's local store reports them.
enum Samples {
    static let source = HealthSource(name: "hrmd", version: "0.1.0")
    static let base: Int64 = 1_764_000_000_000_000

    static func heartRate(
        _ anchor: Int64, at micros: Int64, bpm: Double, device: String = "AA:BB:CC:DD:EE:01", beat: ANTBeatStamp? = nil,
        syncIdentifier: String? = nil, syncVersion: Int? = nil
    ) throws -> StoredSample {
        let time = Timestamp(microsecondsSinceEpoch: micros)
        let sample = try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: bpm), start: time, end: time,
            device: HealthDevice(localIdentifier: device, name: "strap \(device)"),
            metadata: SampleMetadata(sensorLocation: .chest, syncIdentifier: syncIdentifier, syncVersion: syncVersion), antBeat: beat)
        return StoredSample(id: anchor, source: source, sample: sample)
    }

    /// `count` samples at 4 Hz from `first` on, anchors from `anchor` on.
    static func run(count: Int, anchor: Int64, first: Int64, device: String = "AA:BB:CC:DD:EE:01") throws -> [StoredSample] {
        try (0..<count).map { index in
            try heartRate(anchor + Int64(index), at: first + Int64(index) * 250_000, bpm: Double(60 + index % 90), device: device)
        }
    }
}
