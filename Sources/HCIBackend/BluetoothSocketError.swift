import CBluetooth
import Glibc
import ReaderThreads

/// A failed call into the kernel's Bluetooth sockets or libbluetooth: which call, and the
/// errno it left.
public struct BluetoothSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The libc or libbluetooth function that failed (`socket(AF_BLUETOOTH)`, `hci_open_dev`, …).
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// A wake-up pipe's failed `pipe(2)` or `poll(2)`, with its errno.
    init(_ error: WaitError) {
        self.init(call: error.call, errno: error.errno)
    }

    /// The failure of `call` with the calling thread's current errno.
    public static func last(_ call: String) -> BluetoothSocketError {
        BluetoothSocketError(call: call, errno: Glibc.errno)
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

extension WakeUpPipe {
    /// A new wake-up pipe for a Bluetooth socket's waits; its `pipe(2)` failure is thrown as
    /// the socket's error.
    static func forSocket() throws(BluetoothSocketError) -> WakeUpPipe {
        do {
            return try WakeUpPipe()
        } catch {
            throw BluetoothSocketError(error)
        }
    }
}
