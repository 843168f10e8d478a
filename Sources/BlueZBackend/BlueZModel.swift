import DBusClient
import Synchronization

/// The object cache of one bluetoothd lifetime, shared by the supervisor and every strap's
/// connection: signals are applied here in order, and each change is handed to every watcher.
final class BlueZModel: Sendable {
    private struct State {
        var cache = BlueZObjectCache()
        var watchers: [UInt64: AsyncStream<BlueZChange>.Continuation] = [:]
        var nextWatcher: UInt64 = 0
        var ended = false

        func broadcast(_ change: BlueZChange) {
            for watcher in watchers.values { watcher.yield(change) }
        }
    }

    private let state = Mutex(State())

    var cache: BlueZObjectCache { state.withLock { $0.cache } }

    /// Loads the `GetManagedObjects` reply; every watcher hears an `interfacesAdded` for each object.
    func load(managedObjects reply: DBusValue) {
        state.withLock { state in
            state.cache.load(managedObjects: reply)
            for (path, interfaces) in state.cache.objects {
                state.broadcast(.interfacesAdded(path: path, interfaces: interfaces.keys.sorted()))
            }
        }
    }

    func apply(_ signal: DBusSignal) {
        state.withLock { state in
            if let change = state.cache.apply(signal) { state.broadcast(change) }
        }
    }

    /// The cache now and every change after it, atomically: nothing falls between the two.
    /// The stream finishes when bluetoothd goes away (`end()`).
    func watch() -> (BlueZObjectCache, AsyncStream<BlueZChange>) {
        let (stream, continuation) = AsyncStream<BlueZChange>.makeStream()
        let cache = state.withLock { state -> BlueZObjectCache in
            if state.ended {
                continuation.finish()
            } else {
                let id = state.nextWatcher
                state.nextWatcher += 1
                state.watchers[id] = continuation
                continuation.onTermination = { [weak self] _ in
                    _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
                }
            }
            return state.cache
        }
        return (cache, stream)
    }

    /// bluetoothd went away: every watcher's stream finishes.
    func end() {
        let watchers = state.withLock { state in
            state.ended = true
            defer { state.watchers.removeAll() }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.finish() }  // outside the lock: onTermination takes it
    }
}
