import CommandSupport
import HealthModel
import HealthRequests
import HealthStore
import RequestServing

/// A store file opened directly: `--store PATH` or `HRMD_STORE`. Requests are served in this
/// process as the file's owner (``OwnerContext``); samples are read straight from the file,
/// and changes are polled from it, since hrmd writes it from another process. All of it is
/// local SQLite work on the calling task; between polls it sleeps as a task does.
public struct FileTransport: RequestTransport {
    public let store: HealthStore

    public init(store: HealthStore) { self.store = store }

    public func send<Request: HealthRequest>(_ request: Request) async throws(CommandFailure) -> Request.Response {
        do {
            return try await OwnerContext(store: store).serve(request)
        } catch {
            throw error.commandFailure
        }
    }

    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure) {
        try Self.reading { () throws(HealthStoreError) in try store.enumerateSamples(query) { body($0) } }
    }

    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure) {
        try Self.reading { () throws(HealthStoreError) in try store.enumeratePoints(query) { body($0, $1) } }
    }

    /// Polls for changes after the newest one.
    public func followChanges(
        of type: SampleType, pollInterval: Double, until deadline: ContinuousClock.Instant?, _ body: (ChangeSet) -> Void
    ) async throws(CommandFailure) {
        var anchor = try Self.reading { () throws(HealthStoreError) in try store.currentAnchor() }
        let limit = 10_000
        while !Task.isCancelled, deadline.map({ ContinuousClock.now < $0 }) ?? true {
            let changes = try Self.reading { () throws(HealthStoreError) in try store.changes(of: type, since: anchor, limit: limit) }
            anchor = changes.anchor
            if !changes.added.isEmpty || !changes.deleted.isEmpty { body(changes) }
            if changes.added.count < limit {
                do { try await Task.sleep(for: .seconds(pollInterval)) } catch { return }
            }
        }
    }

    /// Runs a read of the file, turning its error into the one-line failure.
    private static func reading<T>(_ body: () throws(HealthStoreError) -> T) throws(CommandFailure) -> T {
        do {
            return try body()
        } catch {
            throw error.commandFailure
        }
    }
}
