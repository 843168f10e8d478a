import Glibc
import ReaderThreads
import SystemPackage

/// An open serial port in raw mode: a USB ANT stick's tty, a microcontroller's ttyACM, or a
/// pty in tests.
///
/// Opening does what a serial port needs: `O_NOCTTY` (never become its controlling terminal),
/// `O_NONBLOCK` and `O_CLOEXEC`, `TIOCEXCL` (no second opener, except root), raw mode with
/// the receiver on and modem lines ignored, the baud rate, and a flush of stale input. Reads
/// come from ``chunks(maximumLength:)``, which polls on a thread of its own so a quiet port
/// never blocks the cooperative pool. The descriptor closes when the last reference goes
/// (the reader thread holds one until it stops).
public final class SerialPort: Sendable {
    /// How long a write may wait for the port to take bytes.
    public static let writeTimeout: Duration = .seconds(2)

    /// The device path it was opened with.
    public let path: String
    let descriptor: FileDescriptor

    /// Opens `path` in raw mode at `baud`.
    ///
    /// - Throws: ``SerialPortError`` naming the call that failed and its errno.
    public init(path: String, baud: Int) throws(SerialPortError) {
        guard let speed = BaudRate.speed(baud) else { throw .unsupportedBaud(baud) }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                FilePath(path), .readWrite, options: [.nonBlocking, .closeOnExec, FileDescriptor.OpenOptions(rawValue: O_NOCTTY)],
                retryOnInterrupt: true)
        } catch {
            throw .open(path: path, (error as? Errno) ?? .ioError)
        }
        self.path = path
        self.descriptor = descriptor
        do {
            try Self.takeExclusively(descriptor, path: path)
            try Self.makeRaw(descriptor, path: path, speed: speed)
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    deinit {
        try? descriptor.close()
    }

    /// Writes all of `bytes`, waiting (up to ``writeTimeout``) while the port's buffer is full.
    ///
    /// - Throws: ``SerialPortError/write(path:_:)`` or ``SerialPortError/hangup(path:)``.
    public func write(_ bytes: [UInt8]) throws(SerialPortError) {
        var written = 0
        while written < bytes.count {
            do {
                written += try bytes[written...].withUnsafeBytes { try descriptor.write($0, retryOnInterrupt: true) }
            } catch let errno as Errno where errno == .resourceTemporarilyUnavailable {
                let events = try poll(for: Int16(POLLOUT), timeout: Self.writeTimeout)
                if events & Int16(POLLHUP | POLLERR) != 0 { throw .hangup(path: path) }
                if events == 0 { throw .write(path: path, .timedOut) }
            } catch let errno as Errno where errno == .ioError {
                throw .hangup(path: path)
            } catch {
                throw .write(path: path, (error as? Errno) ?? .ioError)
            }
        }
    }

    /// Waits up to `timeout` for `events` on the port; returns the events that happened (0 on timeout).
    private func poll(for events: Int16, timeout: Duration) throws(SerialPortError) -> Int16 {
        var entry = pollfd(fd: descriptor.rawValue, events: events, revents: 0)
        while true {
            let result = Glibc.poll(&entry, 1, timeout.milliseconds)
            if result >= 0 { return result == 0 ? 0 : entry.revents }
            if errno != EINTR { throw .write(path: path, Errno(rawValue: errno)) }
        }
    }

    private static func takeExclusively(_ descriptor: FileDescriptor, path: String) throws(SerialPortError) {
        guard ioctl(descriptor.rawValue, UInt(TIOCEXCL)) == 0 else { throw .exclusive(path: path, Errno(rawValue: errno)) }
    }

    private static func makeRaw(_ descriptor: FileDescriptor, path: String, speed: speed_t) throws(SerialPortError) {
        var settings = termios()
        guard tcgetattr(descriptor.rawValue, &settings) == 0 else {
            throw .configure(path: path, call: "tcgetattr", Errno(rawValue: errno))
        }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CLOCAL | CREAD)
        settings.c_cflag &= ~tcflag_t(CRTSCTS)
        withUnsafeMutableBytes(of: &settings.c_cc) { controls in
            controls[Int(VMIN)] = 1
            controls[Int(VTIME)] = 0
        }
        guard cfsetispeed(&settings, speed) == 0, cfsetospeed(&settings, speed) == 0 else {
            throw .configure(path: path, call: "cfsetspeed", Errno(rawValue: errno))
        }
        guard tcsetattr(descriptor.rawValue, TCSANOW, &settings) == 0 else {
            throw .configure(path: path, call: "tcsetattr", Errno(rawValue: errno))
        }
        guard tcflush(descriptor.rawValue, TCIOFLUSH) == 0 else {
            throw .configure(path: path, call: "tcflush", Errno(rawValue: errno))
        }
    }
}
