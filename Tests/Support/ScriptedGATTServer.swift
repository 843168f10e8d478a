import BluetoothWire
import Foundation
@preconcurrency import Glibc
import Synchronization

/// A GATT server on one end of a `socketpair(AF_UNIX, SOCK_SEQPACKET)` (the same message
/// boundaries as an L2CAP channel), answering from a ``GATTTable`` on a thread of its own, with
/// cues that change what it does on given requests: errors, extra PDUs, silence, hanging up.
///
/// It serves for as long as the test holds it, however late the client comes: on a busy
/// machine a test may reach its server many seconds after making it. Its thread ends when the
/// client closes its end, when a cue hangs up, when this object goes (its end is shut down
/// then), or, should a test leak it, after `lifetime` (by default ``HangBound/duration``): a
/// bound on a hang, not on how long a test may take.
public final class ScriptedGATTServer: Sendable {
    /// What the server does on one PDU from the client, instead of answering it.
    public struct Cue: Sendable {
        public enum Step: Sendable {
            /// The answer from the table.
            case answer
            /// An Error Response with this code.
            case refuse(ATTErrorCode)
            /// These bytes as one datagram.
            case send([UInt8])
            /// Closes the server's end.
            case hangUp
            /// Runs on the server's thread (streams notifications, say).
            case perform(@Sendable (Peer) -> Void)
        }

        var opcode: UInt8
        var handle: UInt16?
        var occurrence: Int
        var steps: [Step]

        /// On the `occurrence`th PDU with `opcode` (or, given a `handle`, the `occurrence`th
        /// naming it: the attribute of a Read, Read Blob or Write, the start of a range), do
        /// `steps`; no steps: no answer.
        public init(_ opcode: UInt8, handle: UInt16? = nil, occurrence: Int = 1, _ steps: [Step]) {
            self.opcode = opcode
            self.handle = handle
            self.occurrence = occurrence
            self.steps = steps
        }
    }

    /// The descriptor for the client under test (it owns it from then on).
    public let clientDescriptor: Int32
    /// The serving end; the thread holds it, not this handle, so dropping the handle ends it.
    private let peer: Peer

    /// A server with `table`; `mtu` is what it answers an MTU exchange with (nil: Request Not
    /// Supported, so the ATT_MTU stays 23). Starts serving at once; `lifetime` bounds the serving
    /// thread of a server never let go (a benchmark's long run may need more than the hang bound).
    public init(
        table: GATTTable, mtu: UInt16? = 247, cues: [Cue] = [], lifetime: Duration = HangBound.duration
    ) throws(SocketPairError) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw SocketPairError(errno: errno)
        }
        clientDescriptor = ends[0]
        peer = Peer(descriptor: ends[1], table: table, mtu: mtu, cues: cues)
        let thread = Thread { [peer] in peer.serve(for: lifetime) }
        thread.name = "scripted GATT server"
        thread.start()
    }

    /// Every PDU the client sent, in order.
    public var received: [ATTPDU] { peer.received }

    /// The table now (with the client's writes).
    public var table: GATTTable { peer.table }

    /// Sends `pdu` to the client now; false once the server hung up or the send failed.
    @discardableResult
    public func send(_ pdu: ATTPDU) -> Bool { peer.send(pdu) }

    /// Sends `bytes` as one datagram, blocking while the client's socket is full.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool { peer.send(bytes) }

    /// Whether a PDU from the client is waiting to be read.
    public var hasInputWaiting: Bool { peer.hasInputWaiting }

    /// Closes the server's end: the client reads end of file.
    public func hangUp() { peer.hangUp() }

    /// The test let go of the server: its end is shut down, which wakes and ends the thread.
    deinit { peer.hangUp() }

    /// The serving end: the socket, the table and the script, used from the serving thread (and
    /// by the test through the handle). It closes its descriptor when the last of them lets go.
    public final class Peer: Sendable {
        private let descriptor: Int32
        private let state: Mutex<State>
        private let cues: [Cue]
        private let serverMTU: UInt16?

        private struct State {
            var table: GATTTable
            var mtu = 23
            var received: [ATTPDU] = []
            var seen: [String: Int] = [:]
            var open = true
        }

        init(descriptor: Int32, table: GATTTable, mtu: UInt16?, cues: [Cue]) {
            self.descriptor = descriptor
            state = Mutex(State(table: table))
            self.cues = cues
            serverMTU = mtu
        }

        deinit { close(descriptor) }

        /// Every PDU the client sent, in order.
        public var received: [ATTPDU] { state.withLock { $0.received } }

        /// The table now (with the client's writes).
        public var table: GATTTable { state.withLock { $0.table } }

        /// Sends `pdu` to the client now; false once the server hung up or the send failed.
        @discardableResult
        public func send(_ pdu: ATTPDU) -> Bool { send(pdu.encoded) }

        /// Sends `bytes` as one datagram, blocking while the client's socket is full.
        @discardableResult
        public func send(_ bytes: [UInt8]) -> Bool {
            guard state.withLock({ $0.open }) else { return false }
            return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
        }

        /// Whether a PDU from the client is waiting to be read.
        public var hasInputWaiting: Bool {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLIN) != 0
        }

        /// Shuts the server's end down (once): the client reads end of file, and the serving
        /// thread, woken by it, ends.
        public func hangUp() {
            let wasOpen = state.withLock { state in
                defer { state.open = false }
                return state.open
            }
            if wasOpen { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }

        /// The serving thread: reads and reacts until the end is shut down or the client's end
        /// closes (either reads as end of file), or past `lifetime`.
        func serve(for lifetime: Duration) {
            defer { hangUp() }
            let deadline = ContinuousClock.now.advanced(by: lifetime)
            var buffer = [UInt8](repeating: 0, count: 1024)
            while state.withLock({ $0.open }), ContinuousClock.now < deadline {
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                // The shutdown wakes this poll; the timeout only lets the lifetime be checked.
                guard poll(&entry, 1, 1000) > 0 else { continue }
                let length = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if length < 0, errno == EAGAIN || errno == EINTR { continue }
                guard length > 0 else { return }
                guard let pdu = try? ATTPDU(decoding: buffer[..<length]) else { continue }
                state.withLock { $0.received.append(pdu) }
                react(to: pdu)
            }
        }

        /// Follows the cue for `request`, if any; else answers it when it is a request.
        private func react(to request: ATTPDU) {
            let handle = Self.namedHandle(request)
            let (ofOpcode, ofHandle) = state.withLock { state in
                state.seen["\(request.opcode)", default: 0] += 1
                state.seen["\(request.opcode) \(handle ?? 0)", default: 0] += 1
                return (state.seen["\(request.opcode)"] ?? 0, state.seen["\(request.opcode) \(handle ?? 0)"] ?? 0)
            }
            let cue = cues.first { cue in
                guard cue.opcode == request.opcode else { return false }
                guard let named = cue.handle else { return cue.occurrence == ofOpcode }
                return named == handle && cue.occurrence == ofHandle
            }
            for step in cue?.steps ?? (request.isRequest ? [.answer] : []) {
                switch step {
                case .answer: send(answer(request))
                case .refuse(let error): send(.errorResponse(request: request.opcode, handle: handle ?? 0, error: error))
                case .send(let bytes): send(bytes)
                case .hangUp: hangUp()
                case .perform(let action): action(self)
                }
            }
        }

        private func answer(_ request: ATTPDU) -> ATTPDU {
            if case .exchangeMTURequest(let clientMTU) = request {
                guard let serverMTU else { return .errorResponse(request: request.opcode, handle: 0, error: .requestNotSupported) }
                state.withLock { $0.mtu = Int(max(23, min(clientMTU, serverMTU))) }
                return .exchangeMTUResponse(mtu: serverMTU)
            }
            return state.withLock { state in state.table.answer(request, mtu: state.mtu) }
        }

        /// The attribute a request names, or the start of the range it asks about.
        private static func namedHandle(_ request: ATTPDU) -> UInt16? {
            switch request {
            case .readRequest(let handle), .writeRequest(let handle, _): handle
            case .readByGroupTypeRequest(let start, _, _), .readByTypeRequest(let start, _, _), .findInformationRequest(let start, _): start
            case .other(0x0C, let parameters) where parameters.count == 4: UInt16(parameters[0]) | UInt16(parameters[1]) << 8
            default: nil
            }
        }
    }
}

/// `socketpair(2)` failed.
public struct SocketPairError: Error, Sendable {
    public var errno: Int32
}
