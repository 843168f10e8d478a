import BluetoothWire
@preconcurrency import Glibc
@testable import HCIBackend
import ReaderThreads
import Testing

@Suite("L2CAP connects", .timeLimit(.minutes(1)))
struct L2CAPSocketTests {
    @Test("sockaddr_l2 names the ATT channel, the address least significant byte first, and the LE address type")
    func socketAddress() throws {
        let peer = try #require(BluetoothAddress("A0:9E:1A:01:02:03"))
        let remote = L2CAPSocket.socketAddress(peer, type: .random)
        #expect(remote.l2_family == sa_family_t(AF_BLUETOOTH) && remote.l2_psm == 0)
        #expect(UInt16(littleEndian: remote.l2_cid) == 4)
        #expect(withUnsafeBytes(of: remote.l2_bdaddr) { Array($0) } == [0x03, 0x02, 0x01, 0x1A, 0x9E, 0xA0])
        #expect(remote.l2_bdaddr_type == 2)
        let any = L2CAPSocket.socketAddress(nil, type: .public)
        #expect(withUnsafeBytes(of: any.l2_bdaddr) { Array($0) } == [0, 0, 0, 0, 0, 0] && any.l2_bdaddr_type == 1)
    }

    @Test("a connected socket passes the wait, SO_ERROR clean")
    func connected() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0)
        defer { ends.forEach { close($0) } }
        try await L2CAPSocket.waitUntilConnected(ends[0], to: "peer", timeout: .seconds(5))
    }

    /// A pipe whose write end is full: never writable.
    private func fullPipe() -> [Int32] {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        let chunk = [UInt8](repeating: 0, count: 4096)
        while write(ends[1], chunk, chunk.count) > 0 {}
        return ends
    }

    @Test("a connect that does not finish in time is ETIMEDOUT")
    func timeout() async {
        let ends = fullPipe()
        defer { ends.forEach { close($0) } }
        await #expect(throws: BluetoothSocketError(call: "connect(peer)", errno: ETIMEDOUT)) {
            try await L2CAPSocket.waitUntilConnected(ends[1], to: "peer", timeout: .milliseconds(100))
        }
    }

    @Test("cancelling the task ends the wait with ECANCELED")
    func cancelled() async {
        let ends = fullPipe()
        defer { ends.forEach { close($0) } }
        let waiting = Task { () async -> BluetoothSocketError? in
            do throws(BluetoothSocketError) {
                try await L2CAPSocket.waitUntilConnected(ends[1], to: "peer", timeout: .seconds(50))
                return nil
            } catch {
                return error
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        #expect(await waiting.value == BluetoothSocketError(call: "connect(peer)", errno: ECANCELED))
    }

    @Test("the wake-up pipe's wait for output: writable, woken, timed out")
    func waitForOutput() throws {
        let wakeUp = try WakeUpPipe()
        let ends = fullPipe()
        defer { ends.forEach { close($0) } }
        #expect(try wakeUp.waitUntilWritable(ends[1], timeoutMilliseconds: 10) == .timedOut)
        wakeUp.signal()
        #expect(try wakeUp.waitUntilWritable(ends[1], timeoutMilliseconds: 1000) == .wokenUp)
        var buffer = [UInt8](repeating: 0, count: 65536)
        _ = read(ends[0], &buffer, buffer.count)
        let fresh = try WakeUpPipe()
        #expect(try fresh.waitUntilWritable(ends[1], timeoutMilliseconds: 1000) == .writable)
    }

    @Test("connection failures in plain words")
    func failureWords() {
        func reason(_ errno: Int32) -> String { StrapConnection.connectionFailure(BluetoothSocketError(call: "connect(AA)", errno: errno)) }
        #expect(reason(ETIMEDOUT) == "connection failed: the strap did not answer (out of range, asleep or connected elsewhere?)")
        #expect(reason(EHOSTDOWN) == "connection failed: the strap is out of reach")
        #expect(reason(ECONNREFUSED) == "connection failed: the strap refused the connection")
        #expect(reason(EBUSY) == "connection failed: the adapter is busy with another connection")
        #expect(reason(EIO) == "connection failed: connect(AA): Input/output error")
    }
}
