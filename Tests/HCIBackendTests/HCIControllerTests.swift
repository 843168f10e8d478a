import BluetoothWire
@preconcurrency import Glibc
@testable import HCIBackend
import Logging
import TestSupport
import Testing

/// The controller end of a socketpair that stands in for an adapter's HCI socket: it reads
/// what `hci_send_cmd` wrote and writes event packets back, as a controller would.
private final class ControllerEnd: Sendable {
    let descriptor: Int32

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The next command packet, H4 type byte first; empty when none came within the hang bound.
    /// Polls without blocking, so the task sending the command gets a thread of the pool.
    func command() async -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 300)
        var packet: [UInt8] = []
        try? await eventually("a command packet") {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { packet = Array(buffer[..<count]) }
            return count > 0
        }
        return packet
    }

    /// Writes one event packet (the H4 type byte is added).
    func send(event: [UInt8]) { send(packet: [0x04] + event) }

    func send(packet: [UInt8]) {
        _ = packet.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
    }
}

extension HCIController {
    /// How `command` went, as a value.
    fileprivate func outcome(_ command: HCICommand) async -> Result<[UInt8], HCICommandFailure> {
        do {
            return .success(try await execute(command))
        } catch {
            return .failure(error)
        }
    }
}

@Suite("The HCI socket and its controller, over a socketpair", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct HCIControllerTests {
    private func connected(commandTimeout: Duration = HangBound.duration) throws -> (HCIController, ControllerEnd) {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0)
        let socket = try HCISocket(descriptor: ends[0], adapter: 0)
        return (HCIController(socket: socket, commandTimeout: commandTimeout, logger: Logger(label: "test")), ControllerEnd(ends[1]))
    }

    private let scanOn = HCICommand.leSetScanEnable(true, filterDuplicates: false)

    @Test("a command goes out whole through hci_send_cmd, and its Command Complete answers it")
    func commandComplete() async throws {
        let (controller, peer) = try connected()
        async let answer = controller.execute(.leSetScanParameters(active: true, interval: 0x60, window: 0x30))
        let written = await peer.command()
        #expect(written == [0x01, 0x0B, 0x20, 7, 1, 0x60, 0, 0x30, 0, 0, 0])
        peer.send(event: Straps.commandComplete(0x200B, [0xAA]))
        #expect(try await answer == [0xAA])
        controller.close()
    }

    @Test("an error status is the controller's refusal; a Command Status answers too")
    func refusals() async throws {
        let (controller, peer) = try connected()
        async let refused = controller.outcome(scanOn)
        _ = await peer.command()
        peer.send(event: Straps.commandComplete(scanOn.opcode, status: 0x0C))
        #expect(await refused == .failure(.refused(opcode: scanOn.opcode, status: 0x0C)))

        async let accepted = controller.execute(scanOn)
        _ = await peer.command()
        peer.send(event: Straps.commandStatus(scanOn.opcode, status: 0))
        #expect(try await accepted == [])
        controller.close()
    }

    @Test("a command nobody answers fails after the command timeout")
    func noAnswer() async throws {
        let (controller, peer) = try connected(commandTimeout: .milliseconds(200))
        await #expect(throws: HCICommandFailure.noAnswer(opcode: scanOn.opcode)) { try await controller.execute(scanOn) }
        #expect(await peer.command().count == 6)
        controller.close()
    }

    @Test("other events, and answers to other programs' commands, arrive in order")
    func events() async throws {
        let (controller, peer) = try connected()
        peer.send(event: Straps.advertisingEvent([Straps.report(Straps.polar)]))
        peer.send(event: [0x3E, 3, 0x02, 1, 0])  // truncated: skipped
        peer.send(packet: [0x02, 0x01, 0x20, 0x00, 0x00])  // ACL data: not an event
        peer.send(event: Straps.commandComplete(0x200C))  // nobody waits for it: the kernel's
        var events = controller.events.makeAsyncIterator()
        #expect(await events.next() == .leAdvertisingReports([Straps.report(Straps.polar)]))
        #expect(await events.next() == .commandComplete(opcode: 0x200C, returnParameters: [0]))
        controller.close()
        #expect(await events.next() == nil)
        #expect(controller.failure == nil)
    }

    @Test("the adapter going away ends the events, fails the waiting command, and says why")
    func hangUp() async throws {
        let (controller, peer) = try connected()
        async let pending = controller.outcome(scanOn)
        _ = await peer.command()
        var events = controller.events.makeAsyncIterator()
        shutdown(peer.descriptor, Int32(SHUT_RDWR))
        #expect(await events.next() == nil)
        #expect(await pending == .failure(.closed))
        #expect(controller.failure?.errno == EPIPE)
        await #expect(throws: HCICommandFailure.closed) { try await controller.execute(scanOn) }
    }

    @Test("HCI status codes in words")
    func statusWords() {
        #expect(HCIStatus.describe(0x0C) == "Command Disallowed (0x0c)")
        #expect(HCIStatus.describe(0x99) == "status 0x99")
        #expect(hexCode(UInt16(0x200C)) == "0x200c")
    }
}
