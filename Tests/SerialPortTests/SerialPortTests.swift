import Foundation
import Glibc
import SerialPort
import SystemPackage
import TestSupport
import Testing

@Suite("serial port on a real pty", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct SerialPortTests {
    /// Reads from the stream until `count` bytes arrived, or for `limit` at most (by default the
    /// hang bound; shorter only where nothing may come).
    private func collect(
        _ stream: AsyncThrowingStream<SerialChunk, any Error>, count: Int, limit: Duration = HangBound.duration
    ) async throws -> [UInt8] {
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var bytes: [UInt8] = []
                for try await chunk in stream {
                    bytes += chunk.bytes
                    if bytes.count >= count { return bytes }
                }
                return bytes
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    @Test("bytes flow both ways, unchanged by the line discipline")
    func bothWays() async throws {
        let terminal = try PseudoTerminal()
        let port = try SerialPort(path: terminal.devicePath, baud: 115_200)
        // Bytes a cooked tty would translate or swallow: CR, NL, ^C, ^D, ^S, DEL, 0xFF.
        let sent: [UInt8] = [0x0D, 0x0A, 0x03, 0x04, 0x13, 0x7F, 0xFF, 0x00, 0xA4]
        terminal.write(sent)
        let received = try await collect(port.chunks(), count: sent.count)
        #expect(received == sent)

        try port.write([0xA4, 0x01, 0x4A, 0x00, 0xEF, 0x0D])
        var echoed: [UInt8] = []
        try await eventually("the bytes at the master") {
            echoed += terminal.read(waitingUpTo: 0)
            return echoed.count >= 6
        }
        #expect(echoed == [0xA4, 0x01, 0x4A, 0x00, 0xEF, 0x0D])
    }

    @Test("a quiet port ticks when asked to")
    func idleTicks() async throws {
        let terminal = try PseudoTerminal()
        let port = try SerialPort(path: terminal.devicePath, baud: 9600)
        var ticks = 0
        for try await chunk in port.chunks(idleTick: .milliseconds(20)) {
            #expect(chunk.bytes.isEmpty)
            ticks += 1
            if ticks == 3 { break }
        }
        #expect(ticks == 3)
    }

    @Test("the device going away ends the stream with a hang-up")
    func hangUp() async throws {
        var terminal: PseudoTerminal? = try PseudoTerminal()
        let port = try SerialPort(path: terminal!.devicePath, baud: 115_200)
        let stream = port.chunks()
        terminal = nil  // closes the master: the slave side hangs up
        await #expect(throws: SerialPortError.hangup(path: port.path)) {
            _ = try await collect(stream, count: 1)
        }
    }

    @Test("cancelling the reader ends it, and the port's descriptor is closed once it is gone")
    func cancellation() async throws {
        let terminal = try PseudoTerminal()
        /// Descriptors of this process open on the pty (the test's own slave is one).
        func openOnDevice() -> Int {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return descriptors.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == terminal.devicePath }.count
        }
        let before = openOnDevice()
        var port: SerialPort? = try SerialPort(path: terminal.devicePath, baud: 115_200)
        #expect(openOnDevice() == before + 1)
        // A negative check: nothing is written, so a short read finds nothing.
        let received = try await collect(port!.chunks(), count: 1, limit: .milliseconds(200))
        #expect(received.isEmpty)
        port = nil
        // The reader thread lets go of the port when it stops; then the descriptor is closed.
        try await eventually("the port's descriptor closed (the reader thread still holds the port)") { openOnDevice() == before }
    }

    @Test("opening fails with the call and its errno")
    func openErrors() throws {
        #expect(throws: SerialPortError.open(path: "/dev/hrmd-no-such-tty", .noSuchFileOrDirectory)) {
            _ = try SerialPort(path: "/dev/hrmd-no-such-tty", baud: 115_200)
        }
        #expect(throws: SerialPortError.unsupportedBaud(12345)) {
            _ = try SerialPort(path: "/dev/null", baud: 12345)
        }
        do {
            _ = try SerialPort(path: "/dev/null", baud: 9600)
            Issue.record("/dev/null opened as a serial port")
        } catch {
            guard case .exclusive(_, let errno) = error else {
                guard case .configure(_, _, let errno) = error else { Issue.record("unexpected \(error)"); return }
                #expect(errno == .inappropriateIOCTLForDevice || errno == .invalidArgument)
                return
            }
            #expect(errno == .inappropriateIOCTLForDevice || errno == .invalidArgument)
        }
        #expect(SerialPortError.exclusive(path: "/dev/ttyUSB0", .resourceBusy).description.contains("in use by another program"))
    }

    @Test("a second opener is refused while the port is held (TIOCEXCL; root is exempt)")
    func exclusive() throws {
        let terminal = try PseudoTerminal()
        let port = try SerialPort(path: terminal.devicePath, baud: 115_200)
        defer { withExtendedLifetime(port) {} }
        if getuid() == 0 {
            // The kernel lets root open an exclusive tty: ask it whether the flag is set (TIOCGEXCL).
            let descriptor = open(terminal.devicePath, O_RDWR | O_NOCTTY | O_NONBLOCK)
            #expect(descriptor >= 0)
            defer { close(descriptor) }
            var exclusive: Int32 = 0
            let tiocgexcl: UInt = 0x8004_5440
            #expect(ioctl(descriptor, tiocgexcl, &exclusive) == 0)
            #expect(exclusive == 1)
        } else {
            #expect(throws: SerialPortError.open(path: terminal.devicePath, .resourceBusy)) {
                _ = try SerialPort(path: terminal.devicePath, baud: 115_200)
            }
        }
    }
}
