@preconcurrency import Glibc

/// A libudev (or poll/pipe) call that failed, with the errno it left.
public struct UdevError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C function that failed, such as `udev_monitor_enable_receiving`.
    public var operation: String
    public var errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        "\(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}


extension UdevError {
    /// Throws when a libudev call returned a negative errno.
    static func check(_ result: Int32, _ operation: String) throws(UdevError) {
        if result < 0 { throw UdevError(operation, errno: -result) }
    }

    /// The error a call that returned NULL (or -1) left in errno.
    static func lastError(_ operation: String) -> UdevError {
        UdevError(operation, errno: Glibc.errno == 0 ? ENOMEM : Glibc.errno)
    }
}
