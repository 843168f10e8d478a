import BluetoothWire
import CBluetooth
@preconcurrency import Glibc
import ReaderThreads

/// A connected ATT bearer: an L2CAP socket on the ATT channel of one strap.
public struct ATTBearer: Sendable, Hashable {
    /// The connected `SOCK_SEQPACKET` socket, in blocking mode; whoever takes it closes it.
    public var descriptor: Int32
    /// The LE connection's handle (L2CAP_CONNINFO): how the controller's events name the link.
    public var handle: UInt16

    public init(descriptor: Int32, handle: UInt16) {
        self.descriptor = descriptor
        self.handle = handle
    }
}

/// L2CAP sockets on the LE ATT channel (CID 4): the kernel makes the LE connection itself
/// when one connects, and hands over the link's ATT PDUs one per message.
public enum L2CAPSocket {
    /// Connects to `peer`'s ATT channel from `adapter`, the attempt bounded by `timeout`
    /// (ETIMEDOUT past it; ECANCELED when the task is cancelled; the kernel's errno, such as
    /// EHOSTDOWN or ECONNREFUSED, when the link fails).
    public static func connectATT(
        from adapter: BluetoothAddress, to peer: BluetoothAddress, addressType: LEAddressType, timeout: Duration
    ) async throws(BluetoothSocketError) -> ATTBearer {
        let descriptor = socket(
            AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), BTPROTO_L2CAP)
        guard descriptor >= 0 else { throw .last("socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP)") }
        do throws(BluetoothSocketError) {
            var local = socketAddress(adapter.bytes.allSatisfy { $0 == 0 } ? nil : adapter, type: .public)
            guard withSocketAddress(&local, { bind(descriptor, $0, $1) }) == 0 else { throw .last("bind(L2CAP ATT, \(adapter))") }
            var remote = socketAddress(peer, type: addressType)
            if withSocketAddress(&remote, { connect(descriptor, $0, $1) }) != 0 && errno != EINPROGRESS {
                throw .last("connect(\(peer))")
            }
            try await waitUntilConnected(descriptor, to: "\(peer)", timeout: timeout)
            let handle = try connectionHandle(descriptor)
            guard fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK) == 0 else { throw .last("fcntl(F_SETFL)") }
            return ATTBearer(descriptor: descriptor, handle: handle)
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// `sockaddr_l2` for the ATT channel of `address` (BDADDR_ANY when nil) of `type`.
    static func socketAddress(_ address: BluetoothAddress?, type: LEAddressType) -> sockaddr_l2 {
        var socketAddress = sockaddr_l2()
        socketAddress.l2_family = sa_family_t(AF_BLUETOOTH)
        socketAddress.l2_cid = L2CAPFrame.attChannel.littleEndian
        socketAddress.l2_bdaddr_type = type.socketAddressType
        if let address {
            withUnsafeMutableBytes(of: &socketAddress.l2_bdaddr) { $0.copyBytes(from: address.littleEndian) }
        }
        return socketAddress
    }

    private static func withSocketAddress(
        _ address: inout sockaddr_l2, _ call: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call($0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
        }
    }

    /// Waits for the non-blocking connect of `descriptor` to `peer` on a thread of its own
    /// (poll for POLLOUT beside a wake-up pipe that cancellation signals), at most `timeout`,
    /// then reads how it ended (SO_ERROR).
    static func waitUntilConnected(_ descriptor: Int32, to peer: String, timeout: Duration) async throws(BluetoothSocketError) {
        let wakeUp = try WakeUpPipe.forSocket()
        let readiness = await withTaskCancellationHandler { () async -> Result<WakeUpPipe.OutputReadiness, WaitError> in
            do throws(WaitError) {
                return .success(try await onOwnThread(named: "connect \(peer)") { () throws(WaitError) in
                    try wakeUp.waitUntilWritable(descriptor, timeoutMilliseconds: timeout.milliseconds)
                })
            } catch {
                return .failure(error)
            }
        } onCancel: {
            wakeUp.signal()
        }
        switch readiness {
        case .failure(let error): throw BluetoothSocketError(error)
        case .success(.wokenUp): throw BluetoothSocketError(call: "connect(\(peer))", errno: ECANCELED)
        case .success(.timedOut): throw BluetoothSocketError(call: "connect(\(peer))", errno: ETIMEDOUT)
        case .success(.writable): break
        }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else { throw .last("getsockopt(SO_ERROR)") }
        if failure != 0 { throw BluetoothSocketError(call: "connect(\(peer))", errno: failure) }
    }

    /// The link's HCI handle.
    private static func connectionHandle(_ descriptor: Int32) throws(BluetoothSocketError) -> UInt16 {
        var info = l2cap_conninfo()
        var length = socklen_t(MemoryLayout<l2cap_conninfo>.size)
        guard getsockopt(descriptor, SOL_L2CAP, L2CAP_CONNINFO, &info, &length) == 0 else { throw .last("getsockopt(L2CAP_CONNINFO)") }
        return info.hci_handle
    }
}
