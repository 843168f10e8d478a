import DBusClient
@preconcurrency import Glibc

/// The socket `AcquireNotify` returns, read on a thread of its own: each read is one
/// notification. The stream finishes on hang-up (the strap disconnected), on a read error,
/// or after `stop()`; the descriptor is closed once the thread is done with it.
final class NotificationSocket: @unchecked Sendable {
    let notifications: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let descriptor: DBusFileDescriptor
    /// A pipe: `stop()` writes to the second end, the thread polls the first.
    private let wake: (read: Int32, write: Int32)
    private let mtu: Int

    /// Starts reading `descriptor` (which it keeps until the reading ends).
    init(descriptor: DBusFileDescriptor, mtu: Int) throws(DBusError) {
        (notifications, continuation) = AsyncStream<[UInt8]>.makeStream()
        self.descriptor = descriptor
        self.mtu = max(mtu, 23)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .system(operation: "pipe", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wake = (ends[0], ends[1])
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
    func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    private func readUntilHangUp() {
        defer { continuation.finish() }
        var buffer = [UInt8](repeating: 0, count: mtu + 1)
        while true {
            var descriptors = [
                pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            let events = descriptors[0].revents
            if events & Int16(POLLIN) != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 {
                    continuation.yield(Array(buffer[0..<count]))
                    continue
                }
                if count == 0 { return }  // end of stream: the notify session is over
                if errno == EAGAIN || errno == EINTR { continue }
                return
            }
            if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return }
        }
    }
}
