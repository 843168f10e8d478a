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
/// far side vanished, until the proxy itself goes. Its listener stays open without accepting.
final class BlackholingProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    /// Written once by `blackhole()`: forwarding stops.
    private let silence: [Int32]
    /// Written once as the proxy goes: the held connections close and the thread ends.
    private let release: [Int32]
    private let ended = DispatchSemaphore(value: 0)
    private let thread: Thread

    init(upstreamPort: Int) throws {
        let (listener, port) = try Loopback.listen()
        self.listener = listener
        self.port = port
        silence = try Self.pipeEnds()
        release = try Self.pipeEnds()
        let (silenceRead, releaseRead, ended) = (silence[0], release[0], ended)
        thread = Thread {
            Self.serve(listener: listener, upstreamPort: upstreamPort, silence: silenceRead, release: releaseRead)
            ended.signal()
        }
        thread.start()
    }

    /// Stops forwarding, for good.
    func blackhole() {
        var byte: UInt8 = 1
        _ = write(silence[1], &byte, 1)
    }

    deinit {
        blackhole()
        var byte: UInt8 = 1
        _ = write(release[1], &byte, 1)
        ended.wait()
        (silence + release + [listener]).forEach { close($0) }
    }

    private static func pipeEnds() throws -> [Int32] {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(.EIO) }
        return ends
    }

    /// Whether `fd` became readable within `milliseconds` (a bound on a test that hangs).
    private static func readable(_ fds: [Int32], within milliseconds: Int32) -> [Bool]? {
        var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard poll(&entries, nfds_t(entries.count), milliseconds) > 0 else { return nil }
        return entries.map { $0.revents != 0 }
    }

    private static func serve(listener: Int32, upstreamPort: Int, silence: Int32, release: Int32) {
        guard let ready = readable([listener, silence], within: 120_000), !ready[1] else { return }
        let client = accept(listener, nil, nil)
        guard client >= 0, let upstream = try? Loopback.connect(port: upstreamPort) else { return }
        defer {
            // Held open after the blackhole (a silent peer) until the proxy goes.
            _ = readable([release], within: 120_000)
            close(client)
            close(upstream)
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            guard let ready = readable([client, upstream, silence], within: 120_000), !ready[2] else { return }
            for (from, to) in [(client, upstream), (upstream, client)] where ready[from == client ? 0 : 1] {
                let count = read(from, &buffer, buffer.count)
                if count <= 0 { return }
                var sent = 0
                while sent < count {
                    let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, count - sent) }
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
