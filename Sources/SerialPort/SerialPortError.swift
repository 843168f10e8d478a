import SystemPackage

/// Why a serial port could not be opened, configured, read or written. Each case names the
/// libc call that failed and carries its errno.
public enum SerialPortError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `open(2)` failed: no such device (ENOENT), permission denied (EACCES), …
    case open(path: String, Errno)
    /// `ioctl(TIOCEXCL)`: another process has the port (EBUSY), or the call failed.
    case exclusive(path: String, Errno)
    /// A termios call (`tcgetattr`, `cfsetspeed`, `tcsetattr`, `tcflush`) failed: not a tty (ENOTTY), …
    case configure(path: String, call: String, Errno)
    /// The baud rate has no termios speed constant.
    case unsupportedBaud(Int)
    /// `read(2)` or `poll(2)` failed.
    case read(path: String, Errno)
    /// `write(2)` failed, or the port took no bytes for `SerialPort.writeTimeout`.
    case write(path: String, Errno)
    /// The device went away: unplugged, or the other end of a pty closed.
    case hangup(path: String)

    public var description: String {
        switch self {
        case .open(let path, let errno): "cannot open \(path): \(errno) (errno \(errno.rawValue))"
        case .exclusive(let path, let errno):
            errno == .resourceBusy
                ? "\(path) is in use by another program (EBUSY)"
                : "cannot take \(path) for exclusive use: \(errno) (errno \(errno.rawValue))"
        case .configure(let path, let call, let errno): "cannot configure \(path): \(call): \(errno) (errno \(errno.rawValue))"
        case .unsupportedBaud(let baud): "\(baud) is not a baud rate the kernel's termios knows"
        case .read(let path, let errno): "reading \(path) failed: \(errno) (errno \(errno.rawValue))"
        case .write(let path, let errno): "writing \(path) failed: \(errno) (errno \(errno.rawValue))"
        case .hangup(let path): "\(path) went away (hang-up)"
        }
    }
}
