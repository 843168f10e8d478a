import SDBus
import WakeablePoll
@preconcurrency import Glibc

/// The socket `AcquireNotify` returns, read on a thread of its own: each read is one
/// notification. The stream finishes on hang-up (the strap disconnected), on a read error,
/// or after `stop()`; the descriptor is closed once the thread is done with it.
final class NotificationSocket: @unchecked Sendable {
    let notifications: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let descriptor: DBusFileDescriptor
    /// Signalled by `stop()`; the thread polls it beside the socket.
    private let wakeUp: WakeUpPipe
    private let mtu: Int

    /// Starts reading `descriptor` (which it keeps until the reading ends).
    init(descriptor: DBusFileDescriptor, mtu: Int) throws(DBusError) {
        (notifications, continuation) = AsyncStream<[UInt8]>.makeStream()
        self.descriptor = descriptor
        self.mtu = max(mtu, 23)
        do {
            wakeUp = try WakeUpPipe()
        } catch {
            throw .system(operation: error.call, errno: error.errno)
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<NotificationSocket>.fromOpaque(context!).takeRetainedValue().readUntilHangUp()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<NotificationSocket>.fromOpaque(context).release()
            throw .system(operation: "pthread_create", errno: created)
        }
        pthread_detach(thread)
    }

    /// Ends the reading thread (and so, soon after, closes the socket).
    func stop() { wakeUp.signal() }

    private func readUntilHangUp() {
        defer { continuation.finish() }
        var buffer = [UInt8](repeating: 0, count: mtu + 1)
        while (try? wakeUp.wait(for: descriptor.rawValue)) == .readable {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                continuation.yield(Array(buffer[0..<count]))
                continue
            }
            if count == 0 { return }  // end of stream: the notify session is over
            if errno == EAGAIN || errno == EINTR { continue }
            return
        }
    }
}
