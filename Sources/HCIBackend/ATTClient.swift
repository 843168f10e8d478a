import BluetoothWire
import Logging
import Synchronization
import ReaderThreads
@preconcurrency import Glibc

/// An ATT client on one connected SOCK_SEQPACKET descriptor (an L2CAP socket on CID 4, or one end
/// of a Unix socketpair in tests). One request outstanding at a time; notifications and
/// indications (confirmed automatically) in arrival order. It owns and closes the descriptor.
///
/// A thread of its own reads the socket (poll(2) beside a wake-up pipe), stamps each PDU with its
/// arrival time, answers the outstanding request, and feeds ``notifications``. PDUs larger than
/// the ATT_MTU are refused (read with MSG_TRUNC, so they are seen whole and never overrun a buffer).
/// A request not answered within the transaction timeout ends the bearer, as the ATT spec
/// requires (Core spec Vol 3 Part F 3.3.3); so does the peer closing, a failed send or receive,
/// and ``close()``: the socket is then shut down both ways, the outstanding request fails, and
/// the notifications finish. Of the requests the peer sends (it may be a GATT client too), an
/// MTU exchange is answered (`maximumPDU`) and the rest get Request Not Supported: hrmd serves no
/// attributes.
public final class ATTClient: Sendable {
    /// The ATT_MTU of every LE bearer until an MTU exchange (Core spec Vol 3 Part G 5.2.1).
    public static let defaultMTU = 23
    /// Batches of notifications held for a consumer that has not taken them yet: one batch per
    /// wake-up of the reading thread, which at a strap's pace (a few a second; discovery takes
    /// about one) is one notification. Beyond this they are dropped and counted.
    public static let notificationBuffer = 1024

    let descriptor: Int32
    let transactionTimeout: Duration
    let maximumPDU: Int
    let logger: Logger
    let wakeUp: WakeUpPipe
    let state = Mutex(BearerState())
    let feed: AsyncStream<[ATTNotification]>.Continuation
    private let batches: AsyncStream<[ATTNotification]>

    /// Starts reading `descriptor`, which this client owns from now on (also when this throws).
    /// `maximumPDU` bounds the ATT_MTU an exchange can settle on, and so every PDU read (517: the
    /// longest attribute value, 512 bytes, behind the longest header, a Prepare Write's 5).
    public init(
        descriptor: Int32, transactionTimeout: Duration = .seconds(30), maximumPDU: Int = 517,
        logger: Logger = Logger(label: "hrmd.att")
    ) throws(BluetoothSocketError) {
        do {
            wakeUp = try .forSocket()
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        self.transactionTimeout = transactionTimeout
        self.maximumPDU = min(max(maximumPDU, Self.defaultMTU), Int(UInt16.max))
        self.logger = logger
        (batches, feed) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(Self.notificationBuffer))
        try startReading()
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Handle Value Notifications and Indications in arrival order; finishes when the bearer ends.
    /// One consumer: iterate it from one task.
    public var notifications: ATTNotifications { ATTNotifications(batches: batches) }

    /// The ATT_MTU now: 23 until an MTU exchange through ``request(_:)`` settles on more.
    public var mtu: Int { state.withLock { $0.mtu } }

    /// Why the bearer ended (``ATTClientError/closed`` after ``close()`` or the peer's close); nil while open.
    public var endReason: ATTClientError? { state.withLock { $0.end } }

    /// PDUs received and not passed on: malformed or oversized ones no request was waiting for,
    /// responses with no request outstanding, notifications beyond ``notificationBuffer``.
    public var discardedPDUs: Int { state.withLock { $0.discarded } }

    /// How many requests wait for the one under way to be answered.
    public var requestsWaitingForTurn: Int { state.withLock { $0.waiting.count } }

    /// Sends `pdu` (a request) when the requests before it are done, and returns its response.
    ///
    /// An Error Response throws ``ATTClientError/errorResponse(request:handle:error:)``; a response
    /// to another request ``ATTClientError/unexpected(_:)``; no response within the transaction
    /// timeout ``ATTClientError/timeout(request:)`` (and ends the bearer). After the bearer ended,
    /// every request throws ``ATTClientError/closed``. A request cannot be withdrawn once sent (ATT
    /// has no way to), so cancelling the calling task does not end the wait: ``close()`` does.
    public func request(_ pdu: ATTPDU) async throws(ATTClientError) -> ATTPDU {
        guard pdu.isRequest else {
            throw .malformed(.malformed(what: ATTOpcodeName.of(pdu.opcode), reason: "it is no request, so nothing answers it"))
        }
        await takeTurn()
        defer { passTurn() }
        let encoded = pdu.encoded
        let result = await withCheckedContinuation { (continuation: Transaction.Continuation) in
            let refusal = state.withLock { state -> ATTClientError? in
                guard state.end == nil else { return .closed }
                guard encoded.count <= state.mtu else {
                    return .malformed(.malformed(
                        what: ATTOpcodeName.of(pdu.opcode), reason: "\(encoded.count) bytes, above the ATT_MTU of \(state.mtu)"))
                }
                let deadline = ContinuousClock.now.advanced(by: transactionTimeout)
                state.outstanding = Transaction(request: pdu, deadline: deadline, continuation: continuation)
                return nil
            }
            if let refusal {
                continuation.resume(returning: .failure(refusal))
            } else if let failure = send(encoded) {
                end(.io(failure))
            }
        }
        return try result.get()
    }

    /// Ends the bearer: shuts the socket down, fails the outstanding request and every later one
    /// with ``ATTClientError/closed``, and stops the reading thread, which finishes ``notifications``.
    /// Safe to call any number of times, from any thread.
    public func close() { end(.closed) }

    /// Ends the bearer once, for `reason` (the first reason wins). The reading thread, woken,
    /// passes on what it read before and finishes the notifications. The descriptor itself is
    /// closed when the last reference goes, so no send can ever reach a reused descriptor number.
    func end(_ reason: ATTClientError) {
        let (first, transaction) = state.withLock { state -> (Bool, Transaction?) in
            guard state.end == nil else { return (false, nil) }
            state.end = reason
            defer { state.outstanding = nil }
            return (true, state.outstanding)
        }
        guard first else { return }
        shutdown(descriptor, Int32(SHUT_RDWR))
        transaction?.continuation.resume(returning: .failure(reason))
        wakeUp.signal()
    }

    /// Sends one PDU without blocking (a full socket buffer fails the send: one small request at
    /// a time never fills it unless the link is stuck) and without SIGPIPE.
    func send(_ bytes: [UInt8]) -> BluetoothSocketError? {
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if sent == bytes.count { return nil }
        return sent < 0 ? .last("send") : BluetoothSocketError(call: "send", errno: EMSGSIZE)
    }

    // MARK: Taking turns

    /// Waits until no other request of this client is under way; callers go first come, first served.
    private func takeTurn() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                guard state.turnTaken else {
                    state.turnTaken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the turn to the next waiting caller, if any.
    private func passTurn() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.turnTaken = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// A request on the wire, waiting for its response.
struct Transaction {
    typealias Continuation = CheckedContinuation<Result<ATTPDU, ATTClientError>, Never>
    let request: ATTPDU
    let deadline: ContinuousClock.Instant
    let continuation: Continuation
}

/// What an ``ATTClient`` knows of its bearer, behind one lock.
struct BearerState {
    var mtu = ATTClient.defaultMTU
    /// Why the bearer ended; nil while it is open.
    var end: ATTClientError?
    var outstanding: Transaction?
    /// Whether a caller holds the turn (and the callers waiting for it, in order: as many as
    /// there are concurrent callers).
    var turnTaken = false
    var waiting: [CheckedContinuation<Void, Never>] = []
    var discarded = 0
}
