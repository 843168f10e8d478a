@preconcurrency import Glibc

/// A pty pair standing in for a serial device: the program under test opens ``devicePath``
/// (the slave side, set raw so nothing is echoed or translated); the test talks through the
/// master side. The slave stays open here too, so the program closing and reopening it does
/// not hang up the master.
public final class PseudoTerminal: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var call: String
        public var errno: Int32
        public var description: String { "\(call): \(String(cString: strerror(errno)))" }
    }

    /// The master side's descriptor (non-blocking).
    public let master: Int32
    private var slave: Int32
    /// The slave's path, such as `/dev/pts/7`.
    public let devicePath: String

    public init() throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw Failure(call: "openpty", errno: errno) }
        var settings = termios()
        tcgetattr(slave, &settings)
        cfmakeraw(&settings)
        tcsetattr(slave, TCSANOW, &settings)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        // ttyname_r: the plain ttyname's static buffer is shared by concurrent tests.
        var name = [CChar](repeating: 0, count: 128)
        let status = ttyname_r(slave, &name, name.count)
        guard status == 0 else { throw Failure(call: "ttyname_r", errno: status) }
        self.master = master
        self.slave = slave
        self.devicePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        close(master)
        if slave >= 0 { close(slave) }
    }

    /// Closes the test's own slave descriptor: once the program closes its own too, reads on
    /// the master see a hang-up, as when a USB device is unplugged.
    public func releaseSlave() {
        if slave >= 0 { close(slave) }
        slave = -1
    }

    /// Writes `bytes` to the master (the program reads them). While the pty is full (nobody
    /// reads) it waits up to a second in all, then drops the rest, as a radio would: a test
    /// device never blocks its own thread for long.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        var waits = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
            if count > 0 {
                offset += count
            } else if (errno == EAGAIN || errno == EINTR), waits < 20 {
                waits += 1
                var entry = pollfd(fd: master, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, 50)
            } else {
                return false
            }
        }
        return true
    }

    /// Waits up to `milliseconds` for bytes the program wrote; empty on timeout or hang-up.
    public func read(waitingUpTo milliseconds: Int32) -> [UInt8] {
        var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, milliseconds) > 0, entry.revents & Int16(POLLIN) != 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer[..<count]) : []
    }
}
