import HTTPTypes
import HealthModel
import HealthRequests
import HealthStore
import Hummingbird
import HummingbirdWebSocket
import LiveFeed
import Logging
import NIOCore
import NIOWebSocket
import Synchronization
import Timestamps

/// `GET /api/v1/live`: the live feed as Server-Sent Events or as a WebSocket, for a token that
/// may read (what it may read, as a query shows it). Each stream has the feed's bounded queue;
/// a stream that falls behind gets a gap marker and continues from the newest. A revoked or
/// expired token's streams end within a second with an error event. Streams are bounded in
/// all and per token.
struct LiveStreams: Sendable {
    let feed: LiveFeed
    let store: HealthStore
    let settings: HTTPSettings
    let logger: Logger
    let counts = StreamCounts()

    /// The types a stream follows.
    static let types: [SampleType] = [.heartRate, .workout] + SampleType.eventTypes

    /// The SSE answer for `token`, or the refusal.
    func serverSentEvents(_ request: Request, token: AccessTokenRecord) throws -> Response {
        guard request.uri.queryParameters.isEmpty else { throw RequestFailureResponse.badRequest("/api/v1/live takes no query parameters") }
        let accepts = request.headers[values: .accept].joined(separator: ",")
        guard accepts.contains("text/event-stream") else {
            throw RequestFailureResponse.badRequest("ask for Server-Sent Events (Accept: text/event-stream) or upgrade to a WebSocket")
        }
        guard let lease = start(token) else { throw RequestFailureResponse.tooMany(limitMessage) }
        // The body may never run (a connection reset before the answer is written drops the
        // response unwritten): the lease is then freed when the body closure goes.
        let body = ResponseBody { writer in
            defer { lease.release() }
            let subscription = lease.subscription
            try await writer.write(ByteBuffer(string: "retry: 3000\n\n"))
            // What came while the last write was under way goes out in one write.
            var buffer = ByteBuffer()
            while true {
                let events = await subscription.nextBatch()
                guard !events.isEmpty else { break }
                buffer.clear()
                var ended = false
                for event in events where !ended {
                    Self.appendServerSentEvent(event, to: &buffer, namingPeople: token.manager)
                    if case .ended = event { ended = true }
                }
                try await writer.write(buffer)
                if ended { break }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: body)
    }

    /// Streams to a WebSocket until either side ends.
    func webSocket(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, token: AccessTokenRecord) async throws {
        guard let lease = start(token) else {
            try await outbound.close(.policyViolation, reason: limitMessage)
            return
        }
        defer { lease.release() }
        let subscription = lease.subscription
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The client's own messages are read and dropped; the stream ends when it closes.
            group.addTask { for try await _ in inbound {} }
            group.addTask {
                while true {
                    let events = await subscription.nextBatch()
                    guard !events.isEmpty else { return }
                    for event in events {
                        if case .keepalive = event { continue }
                        try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: Self.webSocketMessage(event, namingPeople: token.manager))))
                        if case .ended(let reason) = event {
                            try await outbound.close(.policyViolation, reason: String(reason.prefix(120)))
                            return
                        }
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    var limitMessage: String {
        "too many live streams: at most \(settings.maxLiveStreams) in all and \(settings.maxLiveStreamsPerToken) per token"
    }

    /// A subscription for `token` and its place in the counts, when the limits allow one more stream.
    private func start(_ token: AccessTokenRecord) -> LiveStreamLease? {
        guard counts.enter(token.id, perToken: settings.maxLiveStreamsPerToken, inAll: settings.maxLiveStreams) else { return nil }
        let reader = LiveReader(source: token.source, isManager: token.manager, types: Set(Self.types))
        let subscription = feed.subscribe(reader, capacity: settings.liveQueueCapacity) { [store, id = token.id] in
            // A store that cannot be read now is asked again in a second; a token that is no
            // longer there was revoked or expired (making a token drops those rows).
            let found: AccessTokenRecord?
            do { found = try store.accessToken(id: id) } catch { return nil }
            guard let current = found else { return "the token was revoked" }
            if current.revoked != nil { return "the token was revoked" }
            if !current.isValid(at: .now()) { return "the token has expired" }
            return nil
        }
        return LiveStreamLease(subscription: subscription, token: token.id, feed: feed, counts: counts)
    }

    /// The Server-Sent Event of `event`, appended to `buffer`; samples name their person when
    /// `namingPeople` (the reader is a manager: who wore which strap is a manager's to read).
    static func appendServerSentEvent(_ event: LiveEvent, to buffer: inout ByteBuffer, namingPeople: Bool) {
        switch event {
        case .sample(let sample):
            buffer.writeStaticString("event: sample\ndata: ")
            buffer.writeBytes(sample.rendered(by: LiveSampleJSON.self, namingPerson: namingPeople))
            buffer.writeStaticString("\n\n")
        case .state(let activity): buffer.writeString("event: state\ndata: \(APIShapes.sensor(activity).serialized)\n\n")
        case .workout(let change): buffer.writeString("event: workout\ndata: \(Self.workoutJSON(change).serialized)\n\n")
        case .healthEvent(let event): buffer.writeString("event: event\ndata: \(EventJSON.object(event).serialized)\n\n")
        case .healthEventDeleted(let deleted): buffer.writeString("event: event\ndata: \(Self.deletedEventJSON(deleted).serialized)\n\n")
        case .gap(let missed): buffer.writeString("event: gap\ndata: {\"missed\":\(missed)}\n\n")
        case .keepalive: buffer.writeStaticString(": keep-alive\n\n")
        case .ended(let reason): buffer.writeString("event: error\ndata: \(JSONErrorLine.of(reason))\n\n")
        }
    }

    /// A workout change as the stream sends it: the workout as `workout list` shows it, or
    /// `{"id":…,"deleted":true}`.
    static func workoutJSON(_ change: LiveWorkout) -> JSONValue {
        switch change {
        case .changed(let workout): WorkoutJSON.object(workout)
        case .deleted(let id): .object([("id", .string(id)), ("deleted", .bool(true))])
        }
    }

    /// An event deleted as the stream sends it: `{"id":…,"type":…,"device":…,"deleted":true}`.
    static func deletedEventJSON(_ deleted: DeletedEvent) -> JSONValue {
        .object([
            ("id", .string(deleted.id)), ("type", .string(deleted.type.identifier)), ("device", .optional(deleted.device)),
            ("deleted", .bool(true)),
        ])
    }

    /// The WebSocket message of `event`; samples name their person when `namingPeople`.
    static func webSocketMessage(_ event: LiveEvent, namingPeople: Bool) -> ByteBuffer {
        var buffer = ByteBuffer()
        switch event {
        case .sample(let sample):
            let json = sample.rendered(by: LiveSampleJSON.self, namingPerson: namingPeople)
            buffer.reserveCapacity(json.count + 28)
            buffer.writeStaticString(#"{"kind":"sample","sample":"#)
            buffer.writeBytes(json)
            buffer.writeStaticString("}")
        case .state(let activity): buffer.writeString(#"{"kind":"state","state":\#(APIShapes.sensor(activity).serialized)}"#)
        case .workout(let change): buffer.writeString(#"{"kind":"workout","workout":\#(Self.workoutJSON(change).serialized)}"#)
        case .healthEvent(let event): buffer.writeString(#"{"kind":"event","event":\#(EventJSON.object(event).serialized)}"#)
        case .healthEventDeleted(let deleted): buffer.writeString(#"{"kind":"event","event":\#(Self.deletedEventJSON(deleted).serialized)}"#)
        case .gap(let missed): buffer.writeString(#"{"kind":"gap","missed":\#(missed)}"#)
        case .keepalive: buffer.writeStaticString(#"{"kind":"keepalive"}"#)
        case .ended(let reason): buffer.writeString(#"{"kind":"error","error":\#(JSONErrorLine.string(reason))}"#)
        }
        return buffer
    }
}

/// One live stream's subscription and its place in ``StreamCounts``, given back once: by
/// ``release()`` when the stream ends, or when the lease is dropped without it (a response
/// whose body never ran because the connection went first, a cancelled upgrade).
final class LiveStreamLease: Sendable {
    let subscription: LiveSubscription
    private let token: String
    private let feed: LiveFeed
    private let counts: StreamCounts
    private let released = Mutex(false)

    init(subscription: LiveSubscription, token: String, feed: LiveFeed, counts: StreamCounts) {
        self.subscription = subscription
        self.token = token
        self.feed = feed
        self.counts = counts
    }

    /// Ends the subscription and frees the slot; later calls do nothing.
    func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        guard first else { return }
        feed.unsubscribe(subscription)
        counts.leave(token)
    }

    deinit { release() }
}

/// Live streams running, in all and per token.
final class StreamCounts: Sendable {
    private let counts = Mutex<(all: Int, perToken: [String: Int])>((0, [:]))

    func enter(_ token: String, perToken: Int, inAll: Int) -> Bool {
        counts.withLock { counts in
            guard counts.all < inAll, counts.perToken[token, default: 0] < perToken else { return false }
            counts.all += 1
            counts.perToken[token, default: 0] += 1
            return true
        }
    }

    func leave(_ token: String) {
        counts.withLock { counts in
            counts.all -= 1
            let left = counts.perToken[token, default: 1] - 1
            counts.perToken[token] = left > 0 ? left : nil
        }
    }

    var running: Int { counts.withLock { $0.all } }
}

/// A refusal a route throws when it has no request to fail: the front turns it into the
/// one-line JSON error.
struct RequestFailureResponse: Error {
    let status: HTTPResponse.Status
    let message: String

    static func badRequest(_ message: String) -> RequestFailureResponse { RequestFailureResponse(status: .badRequest, message: message) }
    static func tooMany(_ message: String) -> RequestFailureResponse { RequestFailureResponse(status: .tooManyRequests, message: message) }
}

import JSONLines

/// `{"error":"…"}` and a JSON string, for messages made outside a route.
enum JSONErrorLine {
    static func of(_ message: String) -> String { JSONValue.object([("error", .string(message))]).serialized }
    static func string(_ message: String) -> String { JSONValue.string(message).serialized }
}

/// The front's bytes of a live sample: the API's JSON object (ids are not shown), made once per
/// sample for every stream (Server-Sent Events and WebSocket alike).
enum LiveSampleJSON: LiveSampleRenderer {
    static func render(_ stored: StoredSample, person: String?) -> [UInt8] {
        APIShapes.renderedSample(stored, person: person)
    }
}
