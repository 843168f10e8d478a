import BluetoothWire
import Logging
import Synchronization

/// An adapter's controller as the backend drives it: commands answered, events in order.
/// The kernel's raw HCI socket in hrmd (``HCIController``); a scripted one in tests.
protocol ControllerChannel: Sendable {
    /// Every followed event that does not answer one of this channel's own commands, in the
    /// order the controller sent them; finishes when the channel closes.
    var events: AsyncStream<HCIEvent> { get }
    /// Sends `command` and waits, bounded, for its Command Complete or Command Status; returns
    /// the return parameters after the status byte.
    func execute(_ command: HCICommand) async throws(HCICommandFailure) -> [UInt8]
    /// Sends `command` without waiting for its answer, and without a word when it fails: for
    /// a task that may no longer wait (hrmd is stopping).
    func post(_ command: HCICommand)
    /// Ends the channel: pending commands fail with ``HCICommandFailure/closed``, `events` finishes.
    func close()
    /// Why the channel ended by itself (the adapter went away, a read failed); nil while it
    /// runs and after ``close()``.
    var failure: BluetoothSocketError? { get }
}

/// Why a command got no successful answer.
enum HCICommandFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The socket refused it: EPERM (CAP_NET_RAW missing), ENETDOWN (the adapter is down), …
    case io(BluetoothSocketError)
    /// The controller answered with an error status.
    case refused(opcode: UInt16, status: UInt8)
    /// No answer within the command timeout.
    case noAnswer(opcode: UInt16)
    /// The channel closed, or the caller was cancelled, before the answer came.
    case closed

    var description: String {
        switch self {
        case .io(let error): "\(error)"
        case .refused(let opcode, let status): "the controller refused command \(hexCode(opcode)): \(HCIStatus.describe(status))"
        case .noAnswer(let opcode): "the controller did not answer command \(hexCode(opcode))"
        case .closed: "the adapter's HCI socket closed"
        }
    }
}

/// The controller behind an ``HCISocket``. The socket's reading thread decodes each event,
/// hands a command's answer to the task waiting for it (the oldest waiting for that opcode: a
/// controller answers in order) and everything else, the answers to other programs' commands
/// (the kernel's) included, to `events`, which keeps the newest 1024 when nobody reads.
final class HCIController: ControllerChannel {
    let events: AsyncStream<HCIEvent>
    private let continuation: AsyncStream<HCIEvent>.Continuation
    private let socket: HCISocket
    private let commandTimeout: Duration
    private let logger: Logger
    private let state = Mutex(State())

    private typealias Answer = Result<[UInt8], HCICommandFailure>

    private struct Waiter {
        var opcode: UInt16
        var continuation: CheckedContinuation<Answer, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        var closed = false
        var failure: BluetoothSocketError?
    }

    init(socket: HCISocket, commandTimeout: Duration = .seconds(2), logger: Logger) {
        (events, continuation) = AsyncStream.makeStream(of: HCIEvent.self, bufferingPolicy: .bufferingNewest(1024))
        self.socket = socket
        self.commandTimeout = commandTimeout
        self.logger = logger
        socket.startReading(deliver: { [self] packet in receive(packet) }, finished: { [self] failure in end(failure) })
    }

    var failure: BluetoothSocketError? { state.withLock { $0.failure } }

    func close() { socket.stop() }

    func post(_ command: HCICommand) { try? socket.send(command) }

    func execute(_ command: HCICommand) async throws(HCICommandFailure) -> [UInt8] {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let answer = await withTaskGroup(of: Void.self) { group -> Answer in
            group.addTask { [self] in
                try? await Task.sleep(for: commandTimeout)  // cancelled once answered
                resolve(id, with: Task.isCancelled ? .failure(.closed) : .failure(.noAnswer(opcode: command.opcode)))
            }
            let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
                let waiting = state.withLock { state in
                    guard !state.closed else { return false }
                    state.waiters[id] = Waiter(opcode: command.opcode, continuation: continuation)
                    return true
                }
                guard waiting else { return continuation.resume(returning: .failure(.closed)) }
                do throws(BluetoothSocketError) {
                    try socket.send(command)
                } catch {
                    resolve(id, with: .failure(.io(error)))
                }
            }
            group.cancelAll()
            return answer
        }
        return try answer.get()
    }

    /// Resumes waiter `id` unless it was resumed already.
    private func resolve(_ id: UInt64, with answer: Answer) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: answer)
    }

    /// Resumes the oldest waiter for `opcode`; false when none waits (another program's command).
    private func answer(_ opcode: UInt16, with answer: Answer) -> Bool {
        let waiter = state.withLock { state -> Waiter? in
            guard let id = state.waiters.filter({ $0.value.opcode == opcode }).keys.min() else { return nil }
            return state.waiters.removeValue(forKey: id)
        }
        waiter?.continuation.resume(returning: answer)
        return waiter != nil
    }

    /// On the reading thread: one event packet.
    private func receive(_ packet: [UInt8]) {
        let event: HCIEvent
        do {
            event = try HCIEvent(decoding: packet)
        } catch {
            logger.debug("hci\(socket.adapter): skipped an event hrmd cannot read: \(error)")
            return
        }
        switch event {
        case .commandComplete(let opcode, let parameters):
            let status = parameters.first ?? 0
            let result: Answer = status == 0 ? .success(Array(parameters.dropFirst())) : .failure(.refused(opcode: opcode, status: status))
            if answer(opcode, with: result) { return }
        case .commandStatus(let status, let opcode):
            if answer(opcode, with: status == 0 ? .success([]) : .failure(.refused(opcode: opcode, status: status))) { return }
        default:
            break
        }
        continuation.yield(event)
    }

    /// On the reading thread, last: the socket failed (`failure`) or was closed (nil).
    private func end(_ failure: BluetoothSocketError?) {
        let waiters = state.withLock { state in
            state.closed = true
            state.failure = failure
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: .failure(.closed)) }
        continuation.finish()
    }
}

/// HCI status codes (Core spec Vol 1 Part F) in words, for logs and states.
enum HCIStatus {
    static func describe(_ status: UInt8) -> String {
        let name: String? = switch status {
        case 0x01: "Unknown HCI Command"
        case 0x02: "Unknown Connection Identifier"
        case 0x07: "Memory Capacity Exceeded"
        case 0x0C: "Command Disallowed"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x1A: "Unsupported Remote Feature"
        case 0x1F: "Unspecified Error"
        case 0x3B: "Unacceptable Connection Parameters"
        default: nil
        }
        return name.map { "\($0) (\(hexCode(status)))" } ?? "status \(hexCode(status))"
    }
}
