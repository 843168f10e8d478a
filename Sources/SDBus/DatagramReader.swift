@preconcurrency import Glibc

/// What a datagram socket read beside the bus delivered.
public enum DBusDatagramEvent: Sendable, Equatable {
    /// One datagram (one read of a `SOCK_SEQPACKET`, such as one BLE notification).
    case datagram([UInt8])
    /// The peer hung up or a read failed: no more datagrams; the descriptor is closed.
    case closed
}

/// A socket the connection's loop thread reads beside the bus (see
/// `DBusConnection.readDatagrams`). Stop it with `stop()`.
public struct DBusDatagramReading: Sendable {
    let id: UInt64
    let loop: BusEventLoop

    /// Stops the reading and closes the descriptor. When this returns, the handler is not
    /// called again (it may still be running its last call on another thread only before).
    public func stop() async {
        let loop = loop
        let id = id
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = loop.enqueue { loop in
                loop.stopReading(id: id)
                continuation.resume()
            }
            // A closed loop delivers nothing more: its thread is past its last read.
            if !queued { continuation.resume() }
        }
    }
}

/// One socket read on the loop thread: the descriptor (closed when this goes), a buffer for
/// one datagram and where the datagrams go. Made on the caller's thread, then used on the
/// loop thread alone.
final class DatagramReader: @unchecked Sendable {
    let descriptor: DBusFileDescriptor
    private var buffer: [UInt8]
    private let handler: @Sendable (DBusDatagramEvent) -> Void

    init(descriptor: DBusFileDescriptor, maximumLength: Int, handler: @escaping @Sendable (DBusDatagramEvent) -> Void) {
        self.descriptor = descriptor
        // One byte more than the largest datagram, so a longer one shows as truncated rather than fitting.
        buffer = [UInt8](repeating: 0, count: max(maximumLength, 1) + 1)
        self.handler = handler
    }

    /// Reads every datagram waiting after `poll(2)` reported `events`; false when the socket
    /// is finished (the handler was told `.closed`).
    func readAvailable(events: Int16) -> Bool {
        if events & Int16(POLLIN) == 0 {
            guard events & Int16(POLLHUP | POLLERR | POLLNVAL) == 0 else { return close() }
            return true
        }
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                handler(.datagram(Array(buffer[0..<count])))
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            return close()  // 0: end of stream; anything else: a failed read
        }
    }

    private func close() -> Bool {
        handler(.closed)
        return false
    }
}

extension BusEventLoop {
    /// Starts reading `descriptor` on this thread (a job).
    func startReading(id: UInt64, reader: DatagramReader) -> Result<Void, DBusError> {
        guard bus != nil else { return .failure(.disconnected) }
        datagramReaders[id] = reader
        return .success(())
    }

    /// Stops a reading (a job); its descriptor closes with the reader.
    func stopReading(id: UInt64) {
        datagramReaders[id] = nil
    }

    /// The readers' entries for `poll(2)`, after the bus's and the wake-up descriptor's.
    func appendReaderDescriptors(to descriptors: inout [pollfd]) {
        for (id, reader) in datagramReaders {
            descriptors.append(pollfd(fd: reader.descriptor.rawValue, events: Int16(POLLIN), revents: 0))
            pollOrder.append(id)
        }
    }

    /// Reads what `poll(2)` found on the readers' descriptors (`descriptors[offset...]`).
    func serviceReaders(_ descriptors: [pollfd], from offset: Int) {
        for (index, id) in pollOrder.enumerated() {
            let events = descriptors[offset + index].revents
            guard events != 0, let reader = datagramReaders[id] else { continue }
            if !reader.readAvailable(events: events) { datagramReaders[id] = nil }
        }
    }
}

extension DBusConnection {
    /// Reads the datagrams of `descriptor` (a `SOCK_SEQPACKET` such as the one BlueZ's
    /// `AcquireNotify` returns) on this connection's loop thread, beside the bus, so any number
    /// of such sockets costs no thread of its own. `handler` runs on that thread for each
    /// datagram, in order, and once with `.closed` when the peer hangs up or a read fails; it
    /// must not block. The descriptor is owned until the reading ends (`.closed`, `stop()`, or
    /// the connection closing, which stops it without calling the handler).
    public func readDatagrams(
        from descriptor: DBusFileDescriptor, maximumLength: Int, handler: @escaping @Sendable (DBusDatagramEvent) -> Void
    ) async throws(DBusError) -> DBusDatagramReading {
        let reader = DatagramReader(descriptor: descriptor, maximumLength: maximumLength, handler: handler)
        let id = loop.makeIdentifier()
        try await onLoop { loop in loop.startReading(id: id, reader: reader) }
        return DBusDatagramReading(id: id, loop: loop)
    }
}
