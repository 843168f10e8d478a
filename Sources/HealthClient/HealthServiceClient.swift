@preconcurrency import Glibc
import HealthModel
import HealthRequests
import HealthWire
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

    // MARK: Requests

    /// Sends one request and returns its answer: the request's arguments and answer coded
    /// as the interface lays them out, the service's refusal as a `HealthServiceError`.
    public func send<Request: HealthRequest>(_ request: Request, timeout: Duration = DBusConnection.defaultTimeout)
        async throws(HealthServiceError) -> Request.Response
    {
        let reply = try await call(Request.name, try Self.arguments(of: request), timeout: timeout)
        do { return try RequestCoding.decode(Request.Response.self, from: reply, as: Self.layout(of: Request.self).outputs) } catch {
            throw error.serviceError(Request.name)
        }
    }

    /// A request's arguments, laid out as its method's.
    static func arguments<Request: HealthRequest>(of request: Request) throws(HealthServiceError) -> [DBusValue] {
        do { return try RequestCoding.encode(request, as: try layout(of: Request.self).inputs) } catch {
            throw .other("\(Request.name): \(error)")
        }
    }

    private static func layout<Request: HealthRequest>(of type: Request.Type) throws(WireError)
        -> (inputs: [DBusArgument], outputs: [DBusArgument])
    {
        guard let layout = HealthInterface.layouts[Request.name] else { throw WireError("\(Request.name) is not in \(HealthBus.interface)") }
        return layout
    }

    // MARK: Authorization

    /// Records a `notDetermined` request for each (type, access) not answered yet.
    public func requestAuthorization(share: [SampleType], read: [SampleType]) async throws(HealthServiceError) {
        _ = try await send(RequestAuthorization(app: app, share: share, read: read))
    }

    /// The caller's share status for `type`.
    public func authorizationStatus(for type: SampleType) async throws(HealthServiceError) -> AuthorizationStatus {
        let reply = try await send(AuthorizationStatusRequest(app: app, type: type))
        guard let status = AuthorizationStatus(name: reply.status) else { throw .other("AuthorizationStatus: unexpected reply \(reply.status)") }
        return status
    }

    /// Manager: sets the user's answer for `source` and `type`.
    public func setAuthorization(
        _ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess
    ) async throws(HealthServiceError) {
        _ = try await send(SetAuthorization(status, source: source, type: type, access: access))
    }

    /// Manager: every request and answer. Entries of types this client does not know are left out.
    public func authorizations() async throws(HealthServiceError) -> [AuthorizationAccessEntry] {
        // Decoded entry by entry, so that a type added to a newer service is skipped, not an error.
        let reply = try await call(Authorizations.name, [])
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
        let reply = try await send(SaveSamples(app: app, samples: samples))
        return (Int(reply.stored), Int(reply.unchanged))
    }

    /// Samples of a type starting in [since, until), oldest first, at most `limit` (0: the
    /// service's maximum per query).
    public func querySamples(
        of type: SampleType, since: Timestamp? = nil, until: Timestamp? = nil, limit: Int = 0
    ) async throws(HealthServiceError) -> [StoredSample] {
        let reply = try await send(QuerySamples(app: app, type: type, since: since, until: until, limit: limit))
        do { return try reply.samples.map { record throws(WireError) in try record.storedSample() } } catch {
            throw error.serviceError("QuerySamples")
        }
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
        let request = QuerySamplesToFile(
            app: app, type: type, since: since, until: until,
            options: QuerySamplesToFile.Options(
                source: filter.source, device: filter.device, limit: filter.limit.map { UInt32(clamping: $0) },
                newestFirst: filter.newestFirst),
            output: PassedFile(descriptor: ends[1]))
        async let answered = querySamplesCall(request, reader: reader)
        while let samples = await reader.next() {
            for sample in samples { body(sample) }
        }
        // A failed call stopped the reader: its error is the one to report.
        try await answered.get()
        guard let outcome = reader.outcome else { throw .other("QuerySamplesToFile: the sample reader ended without an outcome") }
        return try outcome.get()
    }

    /// Sends QuerySamplesToFile and tells `reader` how it went: answered (read what is left)
    /// or failed (stop reading).
    private func querySamplesCall(_ request: QuerySamplesToFile, reader: SampleLineReader) async -> Result<Void, HealthServiceError> {
        // The call's arguments hold a duplicate of the write end; this process's own copy is
        // closed once the arguments are made, and the duplicate as soon as the call is done
        // with it, so the reader sees the end of the stream when the service closes its copy.
        let writeEnd = request.output.descriptor
        let arguments: [DBusValue]
        do {
            arguments = try Self.arguments(of: request)
        } catch {
            close(writeEnd)
            reader.stop()
            return .failure(error)
        }
        close(writeEnd)
        do {
            _ = try await call(QuerySamplesToFile.name, arguments)
        } catch {
            reader.stop()
            return .failure(error)
        }
        reader.callReplied()
        return .success(())
    }

    /// Deletes samples of `type` starting in [since, until), leaving tombstones. `source` nil
    /// is the caller's own; a manager may name any source. Returns how many.
    public func deleteSamples(
        of type: SampleType, source: String?, since: Timestamp? = nil, until: Timestamp? = nil
    ) async throws(HealthServiceError) -> Int {
        Int(try await send(DeleteSamples(app: app, type: type, source: source, since: since, until: until)).deleted)
    }

    // MARK: Analysis

    /// Statistics per bucket, non-empty buckets oldest first, in the type's canonical unit;
    /// `timeZone` (an IANA name) places 1d buckets.
    public func statistics(
        of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp? = nil, until: Timestamp? = nil,
        timeZone: String? = nil
    ) async throws(HealthServiceError) -> [StatisticsBucketValue] {
        try await send(Statistics(app: app, type: type, bucket: bucket, since: since, until: until, timeZone: timeZone)).buckets
    }

    /// Heart-rate variability of the RR intervals in the range; nil without beats.
    public func heartRateVariability(
        since: Timestamp? = nil, until: Timestamp? = nil
    ) async throws(HealthServiceError) -> HeartRateVariability? {
        try await send(HeartRateVariabilityRequest(app: app, since: since, until: until)).variability
    }

    /// Time in the heart-rate zones of `maximumHeartRate`; empty without samples.
    public func heartRateZones(
        since: Timestamp? = nil, until: Timestamp? = nil, maximumHeartRate: Double
    ) async throws(HealthServiceError) -> [HeartRateZones.Zone] {
        try await send(HeartRateZonesRequest(app: app, since: since, until: until, maxHeartRate: maximumHeartRate)).zones
    }

    // MARK: Changes

    /// Samples added and deleted after `anchor` (0: from the beginning), at most `limit`
    /// events (0: the service's maximum), and the anchor to pass next.
    public func changes(of type: SampleType, since anchor: Int64, limit: Int = 0) async throws(HealthServiceError) -> ChangeSet {
        let reply = try await send(Changes(app: app, type: type, anchor: anchor, limit: limit))
        do {
            return ChangeSet(
                added: try reply.added.map { record throws(WireError) in try record.storedSample() },
                deleted: reply.deleted.map { $0.withType(type) }, anchor: Int64(bitPattern: reply.newAnchor))
        } catch {
            throw error.serviceError("Changes")
        }
    }

    /// The anchor of the newest change of `type` this client may see: changes from it report
    /// only what comes next. To an application it is an opaque token (its bits in an Int64);
    /// pass it back as it came.
    public func anchor(of type: SampleType) async throws(HealthServiceError) -> Int64 {
        Int64(bitPattern: try await send(Anchor(app: app, type: type)).anchor)
    }

    /// The store's newest anchor over every source and type (managers only): changes from it
    /// report only what comes next.
    public func currentAnchor() async throws(HealthServiceError) -> Int64 {
        let anchor = try await send(CurrentAnchor()).anchor
        guard let plain = Int64(exactly: anchor) else { throw .other("CurrentAnchor: unexpected reply \(anchor)") }
        return plain
    }

    /// From now on the service sends this connection `SamplesChanged` for `type`.
    public func observe(_ type: SampleType) async throws(HealthServiceError) {
        _ = try await send(Observe(app: app, type: type))
    }

    /// Stops what `observe` started.
    public func unobserve(_ type: SampleType) async throws(HealthServiceError) {
        _ = try await send(Unobserve(app: app, type: type))
    }

    // MARK: Inventory

    /// Manager: every device, and what the daemon says of each sensor now.
    public func devices() async throws(HealthServiceError) -> (devices: [DeviceSummary], activity: [SensorActivity]) {
        let reply = try await send(Devices())
        return (reply.devices, reply.activity)
    }

    /// Manager: every source.
    public func sources() async throws(HealthServiceError) -> [SourceSummary] {
        try await send(Sources()).sources
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
        let options = ImportOptions(
            name: name, acceptDamaged: acceptDamaged, speed: speed, measurementHandle: measurementHandle.map(Int64.init))
        let reply = try await send(Import(file: PassedFile(descriptor: descriptor), options: options), timeout: Self.importTimeout)
        return ImportResult(summary: reply.summary, messages: reply.messages)
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
}

/// pipe2(2), which Glibc's Swift module leaves out (it needs _GNU_SOURCE).
@_silgen_name("pipe2")
func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
