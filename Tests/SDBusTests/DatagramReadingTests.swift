@preconcurrency import Glibc
import SDBus
import TestSupport
import Testing

@Suite("Sockets read on the bus's loop thread", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct DatagramReadingTests {
    /// A connected `SOCK_SEQPACKET` pair: the end the connection reads and the end the test writes.
    private func socketPair() throws -> (read: DBusFileDescriptor, write: DBusFileDescriptor) {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        return (DBusFileDescriptor(owning: ends[0]), DBusFileDescriptor(owning: ends[1]))
    }

    /// `send(2)`'s result: the bytes sent, or -1.
    @discardableResult
    private func send(_ bytes: [UInt8], to descriptor: DBusFileDescriptor) -> Int {
        bytes.withUnsafeBytes { Glibc.send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    @Test("datagrams arrive whole and in order")
    func datagramsInOrder() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let (readEnd, writeEnd) = try socketPair()
        let (events, continuation) = AsyncStream<DBusDatagramEvent>.makeStream()
        let reading = try await connection.readDatagrams(from: readEnd, maximumLength: 23) { continuation.yield($0) }
        let sent = (0..<50).map { index in [UInt8(0x10), UInt8(index), UInt8(index / 2)] }
        for datagram in sent { send(datagram, to: writeEnd) }
        var received: [DBusDatagramEvent] = []
        for _ in sent {
            guard let event = await first(events) else { break }
            received.append(event)
        }
        #expect(received == sent.map { .datagram($0) })
        await reading.stop()
    }

    @Test("a hang-up is reported once and the descriptor closed; a stopped reading delivers nothing more")
    func hangUpAndStop() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }

        // The reading's own end is closed once the reading is over: the peer's sends then fail.
        var (readEnd, writeEnd): (DBusFileDescriptor?, DBusFileDescriptor) = try socketPair()
        let (events, continuation) = AsyncStream<DBusDatagramEvent>.makeStream()
        _ = try await connection.readDatagrams(from: try #require(readEnd), maximumLength: 23) { continuation.yield($0) }
        readEnd = nil
        #expect(send([1, 2], to: writeEnd) == 2)
        shutdown(writeEnd.rawValue, Int32(SHUT_WR))  // the end of the stream, as a strap's hang-up
        #expect(await first(events) == .datagram([1, 2]))
        #expect(await first(events) == .closed)
        try await eventually("the reading's end closed") { send([3], to: writeEnd) == -1 }

        var (second, secondWrite): (DBusFileDescriptor?, DBusFileDescriptor) = try socketPair()
        let reading = try await connection.readDatagrams(from: try #require(second), maximumLength: 23) { _ in }
        second = nil
        await reading.stop()
        // Stopped: the reader is gone with its end of the socket, so nothing more can be read.
        #expect(send([4], to: secondWrite) == -1)
    }
}
