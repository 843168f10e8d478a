import HealthModel
import Timestamps

/// The events that overlap [since, until) the caller may read (its source's, and with read
/// authorization of an event type every source's events of it), newest start first, of one
/// type, person or strap when named.
public struct Events: HealthRequest {
    public static let name = "Events"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(EventQuery.answerLimit, of: "event")

    public var app: String
    public var since: Int64
    public var until: Int64
    /// An event type's identifier; "": every event type.
    public var type: String
    public var person: String
    public var device: String
    /// 1…``EventQuery/answerLimit``.
    public var limit: UInt32

    public init(app: String, since: Timestamp?, until: Timestamp?, type: SampleType?, person: String?, device: String?, limit: Int) {
        self.app = app
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.type = type?.identifier ?? ""
        self.person = person ?? ""
        self.device = device ?? ""
        self.limit = UInt32(clamping: limit)
    }

    public struct Response: Codable, Sendable {
        public var events: [HealthEvent]

        public init(events: [HealthEvent]) { self.events = events }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let view = try await context.view(of: source)
        let range = try WireTime.checked(since: since, until: until)
        guard (1...UInt32(EventQuery.answerLimit)).contains(limit) else {
            throw .invalidArguments("limit must be 1…\(EventQuery.answerLimit), not \(limit)")
        }
        var types: [SampleType] = []
        if !type.isEmpty {
            do { types = [try SampleType.eventType(named: type)] } catch { throw .invalidArguments(error.description) }
        }
        let query = EventQuery(
            types: types, since: range.since, until: range.until, person: person.isEmpty ? nil : person,
            device: device.isEmpty ? nil : device, reader: view.reader, limit: Int(limit))
        return Response(events: try await context.onStore { store throws(HealthStoreError) in try store.events(query) })
    }
}

/// Deletes an event (a false alarm, a strap worn loose on purpose), leaving a tombstone that
/// followers of the store's changes and the sync see. Events are hrmd's: only a manager of the
/// store deletes them.
public struct DeleteEvent: HealthRequest {
    public static let name = "DeleteEvent"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant

    public var app: String
    public var id: String

    public init(app: String, id: String) {
        self.app = app
        self.id = id
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        _ = try context.source(app: app)
        let id = self.id
        let event = try await context.onStore { store throws(HealthStoreError) in try store.deleteEvent(id) }
        context.log(.notice, "deleted an event", ["event": id, "type": event.type.identifier])
        return NoResponse()
    }
}
