import SDBus
import Synchronization

/// The object cache of one bluetoothd lifetime, shared by the supervisor and every strap's
/// connection: signals are applied here in order, on the bus's loop thread as they arrive
/// (`take`), and each change is handed to every watcher.
///
/// Applying them there, before the loop reads the next message, means that when a call to
/// bluetoothd returns, the cache holds every signal bluetoothd sent before its reply. bluetoothd
/// (gdbus) sends all the changes it still holds before any message it sends, so a reply is a
/// barrier: whatever bluetoothd did before answering is in the cache (`StrapLink.settle`).
///
/// Changes are yielded outside the lock: yielding resumes a waiting task, which takes that
/// task's status lock, while cancelling a watcher's task holds its status lock and takes this
/// one (in `onTermination`). Yielding under the lock deadlocks the two.
///
/// Notifications of a subscribed Heart Rate Measurement (PropertiesChanged of its `Value`
/// alone) take a shorter way: `takeNotification` hands them to the strap's route on the bus's
/// loop thread as they arrive, past the cache (which keeps no `Value`) and the watchers.
final class BlueZModel: Sendable {
    /// A watcher's stream and the object paths it cares about.
    private struct Watcher {
        var continuation: AsyncStream<BlueZChange>.Continuation
        var wants: @Sendable (BlueZChange) -> Bool
    }

    private struct State {
        var cache = BlueZObjectCache()
        var watchers: [UInt64: Watcher] = [:]
        var nextWatcher: UInt64 = 0
        var ended = false
        /// Whether `GetManagedObjects` was loaded; signals taken before are kept in `early`.
        var loaded = false
        var early: [DBusSignal] = []
    }

    private let state = Mutex(State())
    /// Where each routed characteristic's notifications go, by object path.
    private let routes = Mutex<[String: @Sendable ([UInt8]) -> Void]>([:])

    var cache: BlueZObjectCache { state.withLock { $0.cache } }

    /// Loads the `GetManagedObjects` reply, then applies the signals taken while it was on its
    /// way (older than the reply, so applying them changes nothing it already shows); every
    /// watcher hears an `interfacesAdded` for each object, then those signals' changes. From
    /// here on `take` applies each signal as it arrives.
    func load(managedObjects reply: DBusValue) {
        let (changes, watchers) = state.withLock { state in
            state.cache.load(managedObjects: reply)
            var changes = state.cache.objects.map { path, interfaces in
                BlueZChange.interfacesAdded(path: path, interfaces: interfaces.keys.sorted())
            }
            changes += state.early.compactMap { state.cache.apply($0) }
            state.early = []
            state.loaded = true
            return (changes, Array(state.watchers.values))
        }
        for change in changes {
            for watcher in watchers where watcher.wants(change) { watcher.continuation.yield(change) }
        }
    }

    /// Takes every signal of bluetoothd, on the bus's loop thread as it arrives: a routed
    /// notification goes to its strap (`takeNotification`), anything else is applied to the
    /// cache and handed to the watchers (or kept for `load` until the cache is loaded).
    @Sendable func take(_ signal: DBusSignal) -> Bool {
        if takeNotification(signal) { return true }
        let (change, watchers) = state.withLock { state -> (BlueZChange?, [Watcher]) in
            guard state.loaded else {
                state.early.append(signal)
                return (nil, [])
            }
            return (state.cache.apply(signal), Array(state.watchers.values))
        }
        if let change {
            for watcher in watchers where watcher.wants(change) { watcher.continuation.yield(change) }
        }
        return true
    }

    /// The cache now and every change after it that `wants` accepts, atomically: nothing falls
    /// between the two. The stream finishes when bluetoothd goes away (`end()`). A strap's
    /// connection watches only its own device and the adapters, and the supervisor only what
    /// can change its decisions, so a notification wakes one task, not every strap's.
    func watch(wants: @escaping @Sendable (BlueZChange) -> Bool = { _ in true }) -> (BlueZObjectCache, AsyncStream<BlueZChange>) {
        let (stream, continuation) = AsyncStream<BlueZChange>.makeStream()
        let cache = state.withLock { state -> BlueZObjectCache in
            if state.ended {
                continuation.finish()
            } else {
                let id = state.nextWatcher
                state.nextWatcher += 1
                state.watchers[id] = Watcher(continuation: continuation, wants: wants)
                continuation.onTermination = { [weak self] _ in
                    _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
                }
            }
            return state.cache
        }
        return (cache, stream)
    }

    /// Hands the notifications of the characteristic at `path` to `deliver` (see
    /// `takeNotification`) until `removeRoute(of:)`.
    func routeNotifications(of path: String, to deliver: @escaping @Sendable ([UInt8]) -> Void) {
        routes.withLock { $0[path] = deliver }
    }

    /// Ends the route of `path`: once this returns, its `deliver` is not called again.
    func removeRoute(of path: String) {
        _ = routes.withLock { $0.removeValue(forKey: path) }
    }

    /// Delivers `signal` when it is a notification of a routed characteristic (a
    /// PropertiesChanged of its `Value` alone) and returns true; false leaves it to `apply`.
    /// Delivery happens under the routes' lock, so it never follows `removeRoute`.
    @Sendable func takeNotification(_ signal: DBusSignal) -> Bool {
        let arguments = signal.arguments
        guard signal.member == "PropertiesChanged", arguments.count >= 2, arguments[0].string == BlueZ.characteristicInterface,
            let changed = arguments[1].stringKeyed, changed.count == 1, let value = changed["Value"]?.unwrapped.bytes
        else { return false }
        return routes.withLock { routes in
            guard let deliver = routes[signal.path] else { return false }
            deliver(value)
            return true
        }
    }

    /// bluetoothd went away: every watcher's stream finishes.
    func end() {
        let watchers = state.withLock { state in
            state.ended = true
            defer { state.watchers.removeAll() }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.continuation.finish() }  // outside the lock: onTermination takes it
    }
}
