import CSystemd
@preconcurrency import Glibc
import Synchronization

/// The one owner of an `sd_bus*`. sd-bus is not thread-safe, so everything that touches the
/// bus runs as a job on this loop's own thread, which polls the bus's descriptor, an
/// eventfd that other threads write to when they hand it a job, and the sockets it reads
/// beside the bus. Replies and signals are
/// matched to their callers by sd-bus slot.
final class BusEventLoop: @unchecked Sendable {
    typealias Job = @Sendable (BusEventLoop) -> Void
    typealias CallContinuation = CheckedContinuation<Result<[DBusValue], DBusError>, Never>

    private struct Queue {
        var jobs: [Job] = []
        var accepting = true
    }

    private struct Subscription {
        var id: UInt64
        var stream: AsyncStream<DBusSignal>.Continuation
        /// Sees each signal first, here on the loop thread; what it takes skips the stream.
        var take: (@Sendable (DBusSignal) -> Bool)?
        var installed: CheckedContinuation<Result<Void, DBusError>, Never>?
        /// The sender the rule names, whose signals alone are delivered (nil: anyone's).
        var sender: String?
    }

    private let queue = Mutex(Queue())
    private let wakeDescriptor: Int32
    private let nextIdentifier = Atomic<UInt64>(1)

    // Loop-thread state.
    private(set) var bus: OpaquePointer?
    private var calls: [OpaquePointer: (id: UInt64, continuation: CallContinuation)] = [:]
    private var callSlots: [UInt64: OpaquePointer] = [:]
    private var subscriptions: [OpaquePointer: Subscription] = [:]
    private var subscriptionSlots: [UInt64: OpaquePointer] = [:]
    private var stopRequested = false
    /// The owners of the well-known names that subscriptions name as their sender.
    var nameOwners = NameOwners()
    // Exported objects and the calls they received that are not answered yet (ExportedObject.swift).
    var exports: [UInt64: ExportedObject] = [:]
    var incomingCalls: [UInt64: IncomingCall] = [:]
    /// The unanswered calls by caller uid, and what their arguments hold.
    var callLedger = CallLedger()
    /// The filter that guards the standard interfaces sd-bus answers (ExportedObject.swift).
    var propertiesGuard: OpaquePointer?
    var senderUIDs = UniqueNameCache<UInt32>(capacity: 512)
    // Sockets read beside the bus (DatagramReader.swift), and which reader each poll entry
    // after the first two is.
    var datagramReaders: [UInt64: DatagramReader] = [:]
    var pollOrder: [UInt64] = []
    private var pollDescriptors: [pollfd] = []

    /// Takes ownership of a started `bus` and starts the loop thread.
    init(bus: OpaquePointer) throws(DBusError) {
        let descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard descriptor >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw .system(operation: "eventfd", errno: errno)
        }
        self.bus = bus
        wakeDescriptor = descriptor
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<BusEventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<BusEventLoop>.fromOpaque(context).release()
            sd_bus_flush_close_unref(bus)
            close(descriptor)
            throw .system(operation: "pthread_create", errno: created)
        }
        pthread_detach(thread)
    }

    /// Whether the loop still takes jobs (the bus is open and `stop` was not called).
    var isOpen: Bool { queue.withLock { $0.accepting } }

    func makeIdentifier() -> UInt64 { nextIdentifier.add(1, ordering: .relaxed).oldValue }

    /// Runs `job` on the loop thread; returns false (and does not run it) once the loop is closed.
    @discardableResult
    func enqueue(_ job: @escaping Job) -> Bool {
        queue.withLock { queue in
            guard queue.accepting else { return false }
            queue.jobs.append(job)
            var one: UInt64 = 1
            _ = write(wakeDescriptor, &one, 8)
            return true
        }
    }

    /// Asks the loop to end: pending calls fail, streams finish, the bus is flushed and closed.
    func stop() {
        enqueue { $0.stopRequested = true }
    }

    // MARK: Loop thread

    private func run() {
        while !stopRequested {
            runJobs()
            guard let bus else { break }
            var processed: Int32 = 0
            repeat { processed = sd_bus_process(bus, nil) } while processed > 0 && !stopRequested
            if processed < 0 || sd_bus_is_open(bus) <= 0 { break }
            if stopRequested { break }
            waitForEvents(bus)
        }
        shutDown()
    }

    private func runJobs() {
        let jobs = queue.withLock { queue in
            var drained: UInt64 = 0
            _ = read(wakeDescriptor, &drained, 8)
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        for job in jobs { job(self) }
    }

    private func waitForEvents(_ bus: OpaquePointer) {
        let events = sd_bus_get_events(bus)
        pollDescriptors.removeAll(keepingCapacity: true)
        pollOrder.removeAll(keepingCapacity: true)
        pollDescriptors.append(pollfd(fd: sd_bus_get_fd(bus), events: Int16(max(events, 0)), revents: 0))
        pollDescriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
        appendReaderDescriptors(to: &pollDescriptors)
        var until: UInt64 = 0
        var timeout: Int32 = -1
        if sd_bus_get_timeout(bus, &until) >= 0, until != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            timeout = until <= nowMicroseconds ? 0 : Int32(min((until - nowMicroseconds + 999) / 1000, 60_000))
        }
        if poll(&pollDescriptors, nfds_t(pollDescriptors.count), timeout) > 0 {
            serviceReaders(pollDescriptors, from: 2)
        }
    }

    private func shutDown() {
        let leftover = queue.withLock { queue in
            queue.accepting = false
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        for (slot, call) in calls {
            sd_bus_slot_unref(slot)
            call.continuation.resume(returning: .failure(.disconnected))
        }
        calls.removeAll()
        callSlots.removeAll()
        for (slot, subscription) in subscriptions {
            sd_bus_slot_unref(slot)
            subscription.installed?.resume(returning: .failure(.disconnected))
            subscription.stream.finish()
        }
        subscriptions.removeAll()
        subscriptionSlots.removeAll()
        for followed in nameOwners.followed.values { if let slot = followed.slot { sd_bus_slot_unref(slot) } }
        nameOwners.followed.removeAll()
        removeAllExports()
        if let propertiesGuard { sd_bus_slot_unref(propertiesGuard) }
        propertiesGuard = nil
        datagramReaders.removeAll()
        if let bus { sd_bus_flush_close_unref(bus) }
        bus = nil
        close(wakeDescriptor)
        // Jobs queued before the loop stopped accepting still hold continuations: run them
        // against a closed loop so each one fails instead of hanging.
        for job in leftover { job(self) }
    }

    // MARK: Jobs (loop thread only)

    /// Sends a method call; the continuation gets the reply's body or its error.
    func startCall(
        id: UInt64, destination: String, path: String, interface: String, member: String, arguments: [DBusValue],
        timeoutMicroseconds: UInt64, continuation: CallContinuation
    ) {
        guard let bus else { return continuation.resume(returning: .failure(.disconnected)) }
        var message: OpaquePointer?
        let created = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard created >= 0, let message else {
            return continuation.resume(returning: .failure(.system(operation: "sd_bus_message_new_method_call", errno: -created)))
        }
        defer { sd_bus_message_unref(message) }
        do {
            try MessageWriter(message: message).append(arguments)
        } catch {
            return continuation.resume(returning: .failure(error))
        }
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let sent = sd_bus_call_async(bus, &slot, message, { reply, userdata, _ in
            guard let reply, let userdata else { return 0 }
            Unmanaged<BusEventLoop>.fromOpaque(userdata).takeUnretainedValue().finishCall(reply)
            return 0
        }, userdata, timeoutMicroseconds)
        guard sent >= 0, let slot else {
            return continuation.resume(returning: .failure(.system(operation: "sd_bus_call_async(\(member))", errno: -sent)))
        }
        calls[slot] = (id, continuation)
        callSlots[id] = slot
    }

    private func finishCall(_ reply: OpaquePointer) {
        guard let slot = sd_bus_get_current_slot(sd_bus_message_get_bus(reply)), let call = calls.removeValue(forKey: slot) else { return }
        callSlots[call.id] = nil
        let result: Result<[DBusValue], DBusError>
        if let error = replyError(reply) {
            result = .failure(error)
        } else {
            do { result = .success(try MessageReader(message: reply).readAll()) } catch { result = .failure(error) }
        }
        sd_bus_slot_unref(slot)  // sd-bus holds its own reference while the callback runs
        call.continuation.resume(returning: result)
    }

    /// Abandons a call whose caller was cancelled.
    func cancelCall(id: UInt64) {
        guard let slot = callSlots.removeValue(forKey: id), let call = calls.removeValue(forKey: slot) else { return }
        sd_bus_slot_unref(slot)
        call.continuation.resume(returning: .failure(.abandoned))
    }

    /// Adds a match; `installed` is resumed once the bus daemon confirmed it.
    func addMatch(
        id: UInt64, rule matchRule: DBusMatchRule, stream: AsyncStream<DBusSignal>.Continuation,
        take: (@Sendable (DBusSignal) -> Bool)?, installed: CheckedContinuation<Result<Void, DBusError>, Never>
    ) {
        let rule = matchRule.description
        guard let bus else {
            stream.finish()
            return installed.resume(returning: .failure(.disconnected))
        }
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let added = sd_bus_add_match_async(bus, &slot, rule, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<BusEventLoop>.fromOpaque(userdata).takeUnretainedValue().deliverSignal(message)
            return 0
        }, { reply, userdata, _ in
            guard let reply, let userdata else { return 0 }
            Unmanaged<BusEventLoop>.fromOpaque(userdata).takeUnretainedValue().matchInstalled(reply)
            return 0
        }, userdata)
        guard added >= 0, let slot else {
            stream.finish()
            return installed.resume(returning: .failure(.system(operation: "sd_bus_add_match_async", errno: -added)))
        }
        subscriptions[slot] = Subscription(id: id, stream: stream, take: take, installed: installed, sender: matchRule.sender)
        subscriptionSlots[id] = slot
        if let sender = matchRule.sender { followOwner(of: sender) }
    }

    private func matchInstalled(_ reply: OpaquePointer) {
        guard let slot = sd_bus_get_current_slot(sd_bus_message_get_bus(reply)), let subscription = subscriptions[slot] else { return }
        subscriptions[slot]?.installed = nil
        if let error = replyError(reply) {
            subscription.installed?.resume(returning: .failure(error))
            removeMatch(id: subscription.id)
        } else {
            subscription.installed?.resume(returning: .success(()))
        }
    }

    private func deliverSignal(_ message: OpaquePointer) {
        guard let slot = sd_bus_get_current_slot(sd_bus_message_get_bus(message)), let subscription = subscriptions[slot] else { return }
        func field(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
        let sender = field(sd_bus_message_get_sender(message))
        // dbus-daemon delivers a unicast signal whatever the match says: only the sender's name,
        // which the bus daemon sets, tells a true signal from a forged one.
        guard isTrue(sender: sender, named: subscription.sender) else { return }
        guard let arguments = try? MessageReader(message: message).readAll() else { return }
        let signal = DBusSignal(
            sender: sender, path: field(sd_bus_message_get_path(message)),
            interface: field(sd_bus_message_get_interface(message)), member: field(sd_bus_message_get_member(message)),
            arguments: arguments)
        if subscription.take?(signal) == true { return }
        subscription.stream.yield(signal)
    }

    /// Removes a match (its stream ended); the bus daemon is told asynchronously.
    func removeMatch(id: UInt64) {
        guard let slot = subscriptionSlots.removeValue(forKey: id), let subscription = subscriptions.removeValue(forKey: slot) else { return }
        sd_bus_slot_unref(slot)
        subscription.installed?.resume(returning: .failure(.disconnected))
        subscription.stream.finish()
        if let sender = subscription.sender { stopFollowingOwner(of: sender) }
    }

    /// Sends a signal, to every connection with a matching rule or (with `destination`) to one.
    func emit(path: String, interface: String, member: String, arguments: [DBusValue], destination: String?) -> Result<Void, DBusError> {
        guard let bus else { return .failure(.disconnected) }
        var message: OpaquePointer?
        let created = sd_bus_message_new_signal(bus, &message, path, interface, member)
        guard created >= 0, let message else { return .failure(.system(operation: "sd_bus_message_new_signal", errno: -created)) }
        defer { sd_bus_message_unref(message) }
        do throws(DBusError) {
            if let destination {
                try check(sd_bus_message_set_destination(message, destination), "sd_bus_message_set_destination(\(destination))")
            }
            do {
                try MessageWriter(message: message, limit: DBusCallLimits.signalBytes).append(arguments)
            } catch .overBudget {
                throw DBusError.system(operation: "\(member): a signal over \(DBusCallLimits.signalBytes) bytes", errno: EMSGSIZE)
            }
            try check(sd_bus_send(bus, message, nil), "sd_bus_send")
        } catch {
            return .failure(error)
        }
        return .success(())
    }
}
