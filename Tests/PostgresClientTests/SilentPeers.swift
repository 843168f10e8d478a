@preconcurrency import Glibc
import Foundation

/// A loopback TCP listener that accepts connections and never writes: a peer that stopped
/// answering without closing.
final class SilentListener: @unchecked Sendable {
    let socket: Int32
    let port: Int

    init() throws {
        (socket, port) = try Loopback.listen()
    }

    deinit { close(socket) }
}

/// A loopback TCP proxy to one upstream port, for one client, that forwards both ways until
/// `blackhole()`: from then on it forwards nothing and closes nothing, like a proxy whose
/// far side vanished. Its listener stays open without accepting.
final class BlackholingProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private var wake: [Int32] = [-1, -1]
    private let thread: Thread

    init(upstreamPort: Int) throws {
        let (listener, port) = try Loopback.listen()
        self.listener = listener
        self.port = port
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw POSIXError(.EIO) }
        wake = pipeEnds
        let wakeRead = pipeEnds[0]
        thread = Thread {
            Self.serve(listener: listener, upstreamPort: upstreamPort, wake: wakeRead)
        }
        thread.start()
    }

    /// Stops forwarding, for good.
    func blackhole() {
        var byte: UInt8 = 1
        _ = write(wake[1], &byte, 1)
    }

    deinit {
        blackhole()
        usleep(50_000)
        close(listener)
    }

    private static func serve(listener: Int32, upstreamPort: Int, wake: Int32) {
        var entries = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        guard poll(&entries, 2, 30_000) > 0, entries[1].revents == 0 else { return }
        let client = accept(listener, nil, nil)
        guard client >= 0, let upstream = try? Loopback.connect(port: upstreamPort) else { return }
        var held = [client, upstream]
        var buffer = [UInt8](repeating: 0, count: 65536)
        defer {
            // Held open a while after the blackhole (a silent peer), then closed.
            usleep(20_000_000)
            held.forEach { close($0) }
            held = []
        }
        while true {
            var set = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&set, 3, 60_000) > 0, set[2].revents == 0 else { return }
            for (from, to) in [(0, 1), (1, 0)] where set[from].revents != 0 {
                let count = read(set[from].fd, &buffer, buffer.count)
                if count <= 0 { return }
                var sent = 0
                while sent < count {
                    let written = buffer.withUnsafeBytes { write(set[to].fd, $0.baseAddress! + sent, count - sent) }
                    if written <= 0 { return }
                    sent += written
                }
            }
        }
    }
}

enum Loopback {
    static func listen() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && Glibc.listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard ok else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard ok else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }
}
