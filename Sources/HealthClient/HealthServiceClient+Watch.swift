import HealthRequests
import HealthModel
import HealthWire
import SDBus

extension HealthServiceClient {
    /// Follows the changes of `type` (HKAnchoredObjectQuery with updates): the match for
    /// `SamplesChanged` is installed first, then `Observe`, then `Anchor` (unless
    /// `anchor` is given); each signal for the type then fetches `Changes` from the last
    /// anchor. The stream yields each non-empty change set, and ends with an error when the
    /// service or the bus goes away; stopping to consume it ends the observation.
    public func watch(_ type: SampleType, from anchor: Int64? = nil) async throws(HealthServiceError) -> AsyncThrowingStream<ChangeSet, any Error> {
        let rule = DBusMatchRule(sender: HealthBus.name, path: HealthBus.path, interface: HealthBus.interface, member: "SamplesChanged")
        let signals: AsyncStream<DBusSignal>
        do {
            signals = try await connection.signals(matching: rule)
        } catch {
            throw HealthServiceError(error, member: "AddMatch")
        }
        try await observe(type)
        let start: Int64
        if let anchor { start = anchor } else { start = try await self.anchor(of: type) }
        let client = self
        let (stream, continuation) = AsyncThrowingStream<ChangeSet, any Error>.makeStream()
        let task = Task {
            var anchor = start
            do {
                // Anything stored between Observe and Anchor has an older anchor; what
                // comes after is signalled.
                for await signal in signals where signal.arguments.first?.string == type.identifier {
                    _ = signal
                    while true {
                        let changes = try await client.changes(of: type, since: anchor)
                        guard changes.anchor != anchor else { break }
                        anchor = changes.anchor
                        if !changes.added.isEmpty || !changes.deleted.isEmpty { continuation.yield(changes) }
                        if changes.added.count + changes.deleted.count < HealthBusLimits.samplesPerQuery { break }
                    }
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
            Task { try? await client.unobserve(type) }
        }
        return stream
    }
}
