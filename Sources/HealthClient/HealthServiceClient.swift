@preconcurrency import Glibc
import HealthModel
import HealthStore
import HealthWire
import Ingest
import SDBus
import Timestamps

/// A typed client of the store service `org.hrmd.Health` (interface `org.hrmd.Health1`):
/// every method, with the store's own types in and out, through HealthWire's codings.
/// The caller's source is `USER/APP`: USER is what the bus daemon says of the caller's uid,
/// APP is `app`, fixed here.
public struct HealthServiceClient: Sendable {
    /// Options of QuerySamplesToFile beyond the type and range.
    public struct SampleFilter: Sendable, Hashable {
        public var source: String?
        public var device: String?
        public var limit: Int?
        public var newestFirst = false

        public init(source: String? = nil, device: String? = nil, limit: Int? = nil, newestFirst: Bool = false) {
            self.source = source
            self.device = device
            self.limit = limit
            self.newestFirst = newestFirst
        }
    }

    /// What Import did, and the lines to show.
    public struct ImportResult: Sendable, Equatable {
        public var summary: RecordingImportSummary
        public var messages: [String]
    }

    /// The timeout of Import: a replay at the recorded pace takes as long as the recording.
    public static let importTimeout: Duration = .seconds(7 * 86_400)

    public let connection: DBusConnection
    public let app: String

    /// A client on `connection` that calls as application `app`.
    public init(connection: DBusConnection, app: String = "hrmctl") {
        self.connection = connection
        self.app = app
    }

    /// A client on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set); no bus is `notRunning`.
    public static func system(app: String = "hrmctl") throws(HealthServiceError) -> HealthServiceClient {
        do {
            return HealthServiceClient(connection: try DBusConnection.system(), app: app)
        } catch {
            throw HealthServiceError(error, member: "connect")
        }
    }

    // MARK: Authorization

    /// Records a `notDetermined` request for each (type, access) not answered yet.
    public func requestAuthorization(share: [SampleType], read: [SampleType]) async throws(HealthServiceError) {
        _ = try await call("RequestAuthorization", [
            .string(app), .strings(share.map(\.identifier)), .strings(read.map(\.identifier)),
        ])
    }

    /// The caller's share status for `type`.
    public func authorizationStatus(for type: SampleType) async throws(HealthServiceError) -> AuthorizationStatus {
        let reply = try await call("AuthorizationStatus", [.string(app), .string(type.identifier)])
        guard let text = reply.first?.string, let status = AuthorizationStatus(name: text) else {
            throw .other("AuthorizationStatus: unexpected reply \(reply)")
        }
        return status
    }

    /// Manager: sets the user's answer for `source` and `type`.
    public func setAuthorization(
        _ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess
    ) async throws(HealthServiceError) {
        _ = try await call("SetAuthorization", [
            .string(source), .string(type.identifier), .string(access.rawValue), .string(status.description),
        ])
    }

    /// Manager: every request and answer. Entries of types this client does not know are left out.
    public func authorizations() async throws(HealthServiceError) -> [AuthorizationAccessEntry] {
        let reply = try await call("Authorizations", [])
        guard let entries = reply.first?.elements else { throw .other("Authorizations: unexpected reply \(reply)") }
        var records: [AuthorizationAccessEntry] = []
        for entry in entries {
            guard case .structure(let fields) = entry.unwrapped, fields.count == 4, let typeName = fields[1].string else {
                throw .other("Authorizations: an entry is not (source, type, access, status): \(entry)")
            }
            guard SampleType(identifier: typeName) != nil else { continue }
            do { records.append(try AuthorizationAccessEntry(wire: entry)) } catch { throw .other("Authorizations: \(error)") }
        }
        return records
    }

    // MARK: Samples

    /// Saves samples as the caller's source; returns how many were stored and how many were
    /// already there.
    public func saveSamples(_ samples: [QuantitySample]) async throws(HealthServiceError) -> (stored: Int, unchanged: Int) {
        let reply = try await call("SaveSamples", [
            .string(app), .array(element: "a{sv}", samples.map(SampleSubmission.wireValue)),
        ])
        guard reply.count == 2, let stored = reply[0].integer, let unchanged = reply[1].integer else {
            throw .other("SaveSamples: unexpected reply \(reply)")
        }
        return (Int(stored), Int(unchanged))
    }

    /// Samples of a type starting in [since, until), oldest first, at most `limit` (0: the
    /// service's maximum per query).
    public func querySamples(
        of type: SampleType, since: Timestamp? = nil, until: Timestamp? = nil, limit: Int = 0
    ) async throws(HealthServiceError) -> [StoredSample] {
        let reply = try await call("QuerySamples", [
            .string(app), .string(type.identifier), .int64(WireTime.since(since)), .int64(WireTime.until(until)),
            .uint32(UInt32(clamping: limit)),
        ])
        return try Self.decoded(reply.first, "QuerySamples") { value throws(WireError) in try SampleRecord(wire: value).storedSample() }
    }

    /// Every sample of the query, without a size limit, through a pipe (QuerySamplesToFile):
    /// `body` gets each one, in order, on the calling task, while the call runs; a reader
    /// thread decodes the pipe a bounded way ahead, so a year of samples never sits in memory.
    /// Returns how many went to `body`. Cancelling the task abandons the call and the reading.
    @discardableResult
    public func querySamplesToFile(
        of type: SampleType, since: Timestamp? = nil, until: Timestamp? = nil, filter: SampleFilter = SampleFilter(),
        _ body: (StoredSample) -> Void
    ) async throws(HealthServiceError) -> Int {
        var ends: [Int32] = [-1, -1]
        guard systemPipe2(&ends, O_CLOEXEC) == 0 else {
            throw .other("QuerySamplesToFile: pipe2 failed: \(String(cString: strerror(errno)))")
        }
        let reader: SampleLineReader
        do {
            reader = try SampleLineReader(descriptor: ends[0])
        } catch {
            close(ends[1])
            throw error
        }
        reader.start()
        let options = WireDictionary.value([
            ("source", filter.source.map(DBusValue.string)), ("device", filter.device.map(DBusValue.string)),
            ("limit", filter.limit.map { .uint32(UInt32(clamping: $0)) }), ("newestFirst", .bool(filter.newestFirst)),
        ])
        async let answered = querySamplesCall(
            app: app, type: type, since: since, until: until, options: options, writeEnd: ends[1], reader: reader)
        while let samples = await reader.next() {
            for sample in samples { body(sample) }
        }
        // A failed call stopped the reader: its error is the one to report.
        try await answered.get()
        guard let outcome = reader.outcome else { throw .other("QuerySamplesToFile: the sample reader ended without an outcome") }
        return try outcome.get()
    }

    /// Calls QuerySamplesToFile and tells `reader` how it went: answered (read what is left)
    /// or failed (stop reading).
    private func querySamplesCall(
        app: String, type: SampleType, since: Timestamp?, until: Timestamp?, options: DBusValue, writeEnd: Int32,
        reader: SampleLineReader
    ) async -> Result<Void, HealthServiceError> {
        do {
            // The write end is owned by the call's arguments alone: sd-bus puts a duplicate in
            // the message, and this process's copy is closed as soon as the call is done with
            // it, so the reader sees the end of the stream when the service closes its copy.
            _ = try await call("QuerySamplesToFile", Self.queryArguments(
                app: app, type: type, since: since, until: until, options: options, writeEnd: writeEnd))
        } catch {
            reader.stop()
            return .failure(error)
        }
        reader.callReplied()
        return .success(())
    }

    private static func queryArguments(
        app: String, type: SampleType, since: Timestamp?, until: Timestamp?, options: DBusValue, writeEnd: Int32
    ) -> [DBusValue] {
        [
            .string(app), .string(type.identifier), .int64(WireTime.since(since)), .int64(WireTime.until(until)), options,
            .unixFD(DBusFileDescriptor(owning: writeEnd)),
        ]
    }

    /// Deletes samples of `type` starting in [since, until), leaving tombstones. `source` nil
    /// is the caller's own; a manager may name any source. Returns how many.
    public func deleteSamples(
        of type: SampleType, source: String?, since: Timestamp? = nil, until: Timestamp? = nil
    ) async throws(HealthServiceError) -> Int {
        let reply = try await call("DeleteSamples", [
            .string(app), .string(type.identifier), .string(source ?? ""), .int64(WireTime.since(since)),
            .int64(WireTime.until(until)),
        ])
        guard let count = reply.first?.integer else { throw .other("DeleteSamples: unexpected reply \(reply)") }
        return Int(count)
    }

    // MARK: Analysis

    /// Statistics per bucket, non-empty buckets oldest first, in the type's canonical unit;
    /// `timeZone` (an IANA name) places 1d buckets.
    public func statistics(
        of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp? = nil, until: Timestamp? = nil,
        timeZone: String? = nil
    ) async throws(HealthServiceError) -> [StatisticsBucketValue] {
        let reply = try await call("Statistics", [
            .string(app), .string(type.identifier), .string(bucket.rawValue), .int64(WireTime.since(since)),
            .int64(WireTime.until(until)), WireDictionary.value([("timeZone", timeZone.map(DBusValue.string))]),
        ])
        return try Self.decoded(reply.first, "Statistics") { value throws(WireError) in try StatisticsBucketValue(wire: value) }
    }

    /// Heart-rate variability of the RR intervals in the range; nil without beats.
    public func heartRateVariability(
        since: Timestamp? = nil, until: Timestamp? = nil
    ) async throws(HealthServiceError) -> HeartRateVariability? {
        let reply = try await call("HeartRateVariability", [
            .string(app), .int64(WireTime.since(since)), .int64(WireTime.until(until)),
        ])
        guard let value = reply.first else { throw .other("HeartRateVariability: unexpected reply \(reply)") }
        do { return try HeartRateVariability.fromWire(value) } catch { throw error.serviceError("HeartRateVariability") }
    }

    /// Time in the heart-rate zones of `maximumHeartRate`; empty without samples.
    public func heartRateZones(
        since: Timestamp? = nil, until: Timestamp? = nil, maximumHeartRate: Double
    ) async throws(HealthServiceError) -> [HeartRateZones.Zone] {
        let reply = try await call("HeartRateZones", [
            .string(app), .int64(WireTime.since(since)), .int64(WireTime.until(until)), .double(maximumHeartRate),
        ])
        return try Self.decoded(reply.first, "HeartRateZones") { value throws(WireError) in try HeartRateZones.Zone(wire: value) }
    }

    // MARK: Changes

    /// Samples added and deleted after `anchor` (0: from the beginning), at most `limit`
    /// events (0: the service's maximum), and the anchor to pass next.
    public func changes(of type: SampleType, since anchor: Int64, limit: Int = 0) async throws(HealthServiceError) -> ChangeSet {
        let reply = try await call("Changes", [
            .string(app), .string(type.identifier), .uint64(UInt64(bitPattern: anchor)), .uint32(UInt32(clamping: limit)),
        ])
        guard reply.count == 3, let next = reply[2].anchor else { throw .other("Changes: unexpected reply \(reply)") }
        return ChangeSet(
            added: try Self.decoded(reply[0], "Changes") { value throws(WireError) in try SampleRecord(wire: value).storedSample() },
            deleted: try Self.decoded(reply[1], "Changes") { value throws(WireError) in try DeletedSample(wire: value, type: type) },
            anchor: next)
    }

    /// The anchor of the newest change of `type` this client may see: changes from it report
    /// only what comes next. To an application it is an opaque token (its bits in an Int64);
    /// pass it back as it came.
    public func anchor(of type: SampleType) async throws(HealthServiceError) -> Int64 {
        let reply = try await call("Anchor", [.string(app), .string(type.identifier)])
        guard let anchor = reply.first?.anchor else { throw .other("Anchor: unexpected reply \(reply)") }
        return anchor
    }

    /// The store's newest anchor over every source and type (managers only): changes from it
    /// report only what comes next.
    public func currentAnchor() async throws(HealthServiceError) -> Int64 {
        let reply = try await call("CurrentAnchor", [])
        guard let anchor = reply.first?.integer else { throw .other("CurrentAnchor: unexpected reply \(reply)") }
        return anchor
    }

    /// From now on the service sends this connection `SamplesChanged` for `type`.
    public func observe(_ type: SampleType) async throws(HealthServiceError) {
        _ = try await call("Observe", [.string(app), .string(type.identifier)])
    }

    /// Stops what `observe` started.
    public func unobserve(_ type: SampleType) async throws(HealthServiceError) {
        _ = try await call("Unobserve", [.string(app), .string(type.identifier)])
    }

    // MARK: Inventory

    /// Manager: every device, and what the daemon says of each sensor now.
    public func devices() async throws(HealthServiceError) -> (devices: [DeviceSummary], activity: [SensorActivity]) {
        let reply = try await call("Devices", [])
        guard reply.count == 2 else { throw .other("Devices: unexpected reply \(reply)") }
        return (
            try Self.decoded(reply[0], "Devices") { value throws(WireError) in try DeviceSummary(wire: value) },
            try Self.decoded(reply[1], "Devices") { value throws(WireError) in try SensorActivity(wire: value) }
        )
    }

    /// Manager: every source.
    public func sources() async throws(HealthServiceError) -> [SourceSummary] {
        let reply = try await call("Sources", [])
        return try Self.decoded(reply.first, "Sources") { value throws(WireError) in try SourceSummary(wire: value) }
    }

    // MARK: Import

    /// Manager: replays the recording open at `descriptor` (an hrmd trace, a FIT file or a
    /// btsnoop capture) through the daemon's own path as source hrmd. `name` is the file's
    /// name for messages; `speed` nil plays as fast as possible; `measurementHandle` is the
    /// Heart Rate Measurement handle of a capture without its discovery. The descriptor stays
    /// the caller's.
    public func importRecording(
        descriptor: Int32, name: String, acceptDamaged: Bool = false, speed: Double? = nil, measurementHandle: UInt16? = nil
    ) async throws(HealthServiceError) -> ImportResult {
        let file: DBusFileDescriptor
        do { file = try DBusFileDescriptor.duplicate(descriptor) } catch { throw HealthServiceError(error, member: "Import") }
        let options = WireDictionary.value([
            ("name", .string(name)), ("acceptDamaged", .bool(acceptDamaged)), ("speed", speed.map(DBusValue.double)),
            ("measurementHandle", measurementHandle.map(DBusValue.uint16)),
        ])
        let reply = try await call("Import", [.unixFD(file), options], timeout: Self.importTimeout)
        guard reply.count == 2, let messages = reply[1].strings else { throw .other("Import: unexpected reply \(reply)") }
        do {
            return ImportResult(summary: try RecordingImportSummary(wire: reply[0]), messages: messages)
        } catch {
            throw error.serviceError("Import")
        }
    }

    // MARK: Calls

    func call(
        _ member: String, _ arguments: [DBusValue], timeout: Duration = DBusConnection.defaultTimeout
    ) async throws(HealthServiceError) -> [DBusValue] {
        do {
            return try await connection.call(
                destination: HealthBus.name, path: HealthBus.path, interface: HealthBus.interface, member: member,
                arguments: arguments, timeout: timeout)
        } catch {
            throw HealthServiceError(error, member: member)
        }
    }

    /// The elements of an array in a reply, each decoded with its HealthWire coding.
    static func decoded<Element>(
        _ value: DBusValue?, _ member: String, _ decode: (DBusValue) throws(WireError) -> Element
    ) throws(HealthServiceError) -> [Element] {
        guard let elements = value?.elements else { throw .other("\(member): unexpected reply \(String(describing: value))") }
        do {
            return try elements.map { value throws(WireError) in try decode(value) }
        } catch {
            throw error.serviceError(member)
        }
    }
}

/// pipe2(2), which Glibc's Swift module leaves out (it needs _GNU_SOURCE).
@_silgen_name("pipe2")
func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
