@preconcurrency import Glibc
import Foundation

/// A datagram socket that stands in for systemd's notification socket: point $NOTIFY_SOCKET
/// at `path` and read what a service sends with sd_notify.
public final class NotifySocket: @unchecked Sendable {
    public let path: String
    private let fd: Int32
    /// Every message received so far, in order.
    public private(set) var messages: [String] = []

    public init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Reads until a message satisfies `condition` and returns it (an earlier one, if one
    /// already did); throws ``WaitHung`` when none has within the hang bound. Reads without
    /// blocking, so the wait holds no thread of the cooperative pool.
    @discardableResult
    public func waitFor(_ what: String = "a notification", _ condition: (String) -> Bool) async throws -> String {
        if let found = messages.first(where: condition) { return found }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var found: String?
        try await eventually(what) {
            while found == nil {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { break }
                let message = String(decoding: buffer[..<count], as: UTF8.self)
                messages.append(message)
                if condition(message) { found = message }
            }
            return found != nil
        }
        return found ?? ""
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
