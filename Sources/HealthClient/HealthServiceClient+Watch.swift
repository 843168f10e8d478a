import HealthRequests
import HealthModel
import HealthWire
import SDBus
import Synchronization

extension HealthServiceClient {
    /// Follows the changes of `type` (HKAnchoredObjectQuery with updates): the match for
    /// `SamplesChanged` is installed first, then `Observe`, then `Anchor` (unless
    /// `anchor` is given); each signal for the type then fetches `Changes` from the last
    /// anchor. The stream yields each non-empty change set, and ends with an error when the
    /// service or the bus goes away; stopping to consume it ends the observation.
    public func watch(_ type: SampleType, from anchor: Int64? = nil) async throws(HealthServiceError) -> AsyncThrowingStream<ChangeSet, any Error> {
        let client = self
        let position = WatchState<Int64>(anchor ?? 0)
        return try await following([type], start: { () async throws(HealthServiceError) in
            // Anything stored between Observe and Anchor has an older anchor; what comes
            // after is signalled.
            if anchor == nil { position.set(try await client.anchor(of: type)) }
        }) { () async throws(HealthServiceError) -> [ChangeSet] in
            var sets: [ChangeSet] = []
            while true {
                let since = position.get()
                let changes = try await client.changes(of: type, since: since)
                guard changes.anchor != since else { break }
                position.set(changes.anchor)
                if !changes.added.isEmpty || !changes.deleted.isEmpty { sets.append(changes) }
                if changes.added.count + changes.deleted.count < HealthBusLimits.samplesPerQuery { break }
            }
            return sets
        }
    }

    /// Follows the events of `types` (event types): each `SamplesChanged` for one of them
    /// reads the events the caller may read that lasted into the time the watch started
    /// (`Events`), and the stream yields those that opened or ended since the last read
    /// (``EventFollower``). Events open when it starts are yielded only when they end. It
    /// ends as ``watch(_:from:)`` does.
    public func watchEvents(of types: [SampleType]) async throws(HealthServiceError) -> AsyncThrowingStream<[HealthEvent], any Error> {
        let client = self
        let follower = EventFollower(types: types)
        let request = follower.request(app: app)
        let state = WatchState(follower)
        return try await following(types, start: { () async throws(HealthServiceError) in
            let events = try await client.send(request).events
            state.update { $0.prime(events) }
        }) { () async throws(HealthServiceError) -> [[HealthEvent]] in
            let events = try await client.send(request).events
            let news = state.update { $0.news(in: events) }
            return news.isEmpty ? [] : [news]
        }
    }

    /// The observation both watches share: the match for `SamplesChanged` first, then
    /// `Observe` of each of `types`, then `start`; each signal for one of them then runs
    /// `read`, whose results the stream yields in order. The stream ends with an error when
    /// the service or the bus goes away; stopping to consume it ends the observation
    /// (`Unobserve`).
    private func following<Element: Sendable>(
        _ types: [SampleType], start: () async throws(HealthServiceError) -> Void,
        read: @escaping @Sendable () async throws(HealthServiceError) -> [Element]
    ) async throws(HealthServiceError) -> AsyncThrowingStream<Element, any Error> {
        let rule = DBusMatchRule(sender: HealthBus.name, path: HealthBus.path, interface: HealthBus.interface, member: "SamplesChanged")
        let signals: AsyncStream<DBusSignal>
        do {
            signals = try await connection.signals(matching: rule)
        } catch {
            throw HealthServiceError(error, member: "AddMatch")
        }
        for type in types { try await observe(type) }
        try await start()
        let names = Set(types.map(\.identifier))
        let client = self
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream()
        let task = Task {
            do {
                for await signal in signals where signal.arguments.first?.string.map(names.contains) == true {
                    for element in try await read() { continuation.yield(element) }
                    if Task.isCancelled { break }
                }
                if Task.isCancelled {
                    continuation.finish()
                } else {
                    continuation.finish(throwing: HealthServiceError.notRunning("the store service left the bus"))
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        // The service leaving the bus ends the stream (no signal would come any more).
        let ownerRule = DBusMatchRule(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged", arg0: HealthBus.name)
        let owners = try? await connection.signals(matching: ownerRule)
        let ownerTask = Task {
            guard let owners else { return }
            for await change in owners where change.arguments.count == 3 && change.arguments[2].string == "" {
                continuation.finish(throwing: HealthServiceError.notRunning("the store service left the bus"))
                break
            }
        }
        continuation.onTermination = { _ in
            task.cancel()
            ownerTask.cancel()
            Task { for type in types { try? await client.unobserve(type) } }
        }
        return stream
    }
}

/// What a watch's start and its reads (which run one after another) keep between them.
private final class WatchState<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func get() -> Value { value.withLock { $0 } }
    func set(_ new: Value) { value.withLock { $0 = new } }
    func update<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}
