import BluetoothWire
import Dispatch
import Foundation
import HCIBackend
import SensorBackend
import SensorFrames
import Synchronization
import TestSupport

/// The ATT client's CPU per 1000 notifications: a strap's GATT server, on a thread of this
/// process, answers discovery and then sends Heart Rate Measurement notifications over a
/// socketpair as fast as the client takes them; the client (ATTClient and StrapLink, from the
/// socket to `notify` frames in a FrameSink) is measured as this process's CPU (getrusage) less
/// the server thread's own (CLOCK_THREAD_CPUTIME_ID). The peer: the same notifications read from
/// a SOCK_SEQPACKET socket by a Python loop (`socket.recv` and `struct.unpack`, as the callback
/// of a bleak or gattlib user does), measured with its own process time.
struct ATTBenchmark {
    let scratch: BenchScratch
    let count = 100_000
    /// Notifications the server may send ahead of the frames the sink has seen, in batches:
    /// well within the client's notification buffer, so none is dropped.
    let window = 512
    let batch = 64

    func run() async throws {
        print("att: \(count) Heart Rate Measurement notifications over a socketpair, socket to notify frames")
        let notifications = Self.notifications()
        let client = try await measureClient(notifications)
        report("ATT client: notify frames / sent", "\(client.frames) / \(count)", client.end)
        let perThousand = client.cpuSeconds / Double(count) * 1e6
        report("ATT client CPU per 1000 notifications", "\(format(perThousand, 2)) ms", "server thread excluded")
        if let peer = try await pythonPeer(notifications) {
            report("peer: Python recv + struct.unpack: received", "\(peer.received) / \(count)")
            let peerPerThousand = peer.cpuSeconds / Double(count) * 1e6
            report("peer: Python CPU per 1000 notifications", "\(format(peerPerThousand, 2)) ms")
            report("ratio ATT client / Python", "\(format(perThousand / peerPerThousand, 2))")
        }
        print("")
    }

    /// A few Heart Rate Measurements (8-bit rate, one or two RR intervals) as notification PDUs
    /// of the strap table's 2a37 handle.
    private static func notifications() -> [[UInt8]] {
        let handle = GATTTable(GATTTable.strapServices()).valueHandle(of: .heartRateMeasurement) ?? 0
        return (0..<16).map { index in
            let rr = (0...(index % 2)).map { UInt16(780 + 10 * index + $0) }
            let measurement = HeartRateMeasurement(heartRate: UInt16(60 + index), sensorContact: .detected, rrIntervals: rr)
            return ATTPDU.handleValueNotification(handle: handle, value: measurement.encoded()).encoded
        }
    }

    private struct ClientRun {
        var frames: Int
        var cpuSeconds: Double
        var end: String
    }

    private func measureClient(_ notifications: [[UInt8]]) async throws -> ClientRun {
        let table = GATTTable(GATTTable.strapServices())
        // Credits are signalled rather than given as the initial value: libdispatch traps when a
        // semaphore goes away below its initial value.
        let credits = DispatchSemaphore(value: 0)
        for _ in 0..<window / batch { credits.signal() }
        let serverCPU = Mutex(0.0)
        let stream = ScriptedGATTServer.Cue(ATTPDU.Opcode.writeRequest, handle: table.cccdHandle(of: .heartRateMeasurement), [
            .answer,
            .perform { [count, batch] server in
                for index in 0..<count {
                    if index % batch == 0, credits.wait(timeout: .now() + 10) == .timedOut { break }
                    server.send(notifications[index % notifications.count])
                }
                serverCPU.withLock { $0 = threadCPUSeconds() }
            },
            .hangUp,
        ])
        let server = try ScriptedGATTServer(table: table, cues: [stream], lifetime: .seconds(600))
        let attClient = try ATTClient(descriptor: server.clientDescriptor)
        let frames = FrameCounter(batch: batch, credits: credits)
        let link = StrapLink(client: attClient, device: "C0:FF:EE:00:00:01", sink: frames.sink)
        let before = processCPUSeconds()
        let end = await link.run {}
        withExtendedLifetime(server) {}  // the server serves while it is held: until the link ended
        let cpu = processCPUSeconds() - before - serverCPU.withLock { $0 }
        let ending = if case .ended(let reason, _) = end { reason } else { "cancelled" }
        return ClientRun(frames: frames.notifications, cpuSeconds: cpu, end: ending)
    }

    private struct PeerRun {
        var received: Int
        var cpuSeconds: Double
    }

    /// The Python loop on one end of a SOCK_SEQPACKET socket at a path (it connects), this
    /// process sending the same notifications from a thread, then closing.
    private func pythonPeer(_ notifications: [[UInt8]]) async throws -> PeerRun? {
        let path = scratch.file("att-peer.sock")
        let script = scratch.file("att_peer.py")
        try """
            import socket, struct, sys, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(sys.argv[1])
            start = time.process_time(); received = 0; beats = 0
            while True:
                pdu = s.recv(517)
                if not pdu: break
                opcode, handle = struct.unpack_from('<BH', pdu)
                if opcode == 0x1B:
                    value = pdu[3:]; arrived = time.time(); received += 1
                    beats += value[1]
            print(received, time.process_time() - start)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        guard let listener = SeqpacketListener(path: path) else {
            report("peer: Python recv + struct.unpack", "not measured", "cannot listen on \(path)")
            return nil
        }
        let sender = Thread { [count] in
            guard let connection = listener.accept(timeoutMilliseconds: 30_000) else { return }
            for index in 0..<count {
                let pdu = notifications[index % notifications.count]
                guard pdu.withUnsafeBytes({ send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == pdu.count else { break }
            }
            close(connection)
        }
        sender.start()
        let child = try scratch.python(script, [path])
        let termination = try await child.wait(timeout: .seconds(300))
        listener.close()
        let fields = child.standardOutput.split(whereSeparator: \.isWhitespace)
        guard termination == .exited(0), fields.count == 2, let received = Int(fields[0]), let cpu = Double(fields[1]) else {
            report("peer: Python recv + struct.unpack", "not measured", "python3: \(termination) \(child.standardError.prefix(200))")
            return nil
        }
        return PeerRun(received: received, cpuSeconds: cpu)
    }
}

/// Counts the `notify` frames and gives the server one credit per `batch` of them.
private final class FrameCounter: Sendable {
    private let count = Atomic(0)
    private let batch: Int
    private let credits: DispatchSemaphore

    init(batch: Int, credits: DispatchSemaphore) {
        self.batch = batch
        self.credits = credits
    }

    var notifications: Int { count.load(ordering: .relaxed) }

    var sink: FrameSink {
        FrameSink { frame in
            guard frame.kind == .notify else { return }
            let seen = self.count.add(1, ordering: .relaxed).newValue
            if seen % self.batch == 0 { self.credits.signal() }
        }
    }
}

/// A listening AF_UNIX SOCK_SEQPACKET socket at a path.
private final class SeqpacketListener: Sendable {
    private let descriptor: Int32
    private let path: String

    init?(path: String) {
        descriptor = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.path = path
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard descriptor >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else { return nil }
    }

    /// The first connection, or nil when none comes within the timeout.
    func accept(timeoutMilliseconds: Int32) -> Int32? {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, timeoutMilliseconds) > 0 else { return nil }
        let connection = Glibc.accept(descriptor, nil, nil)
        return connection >= 0 ? connection : nil
    }

    func close() {
        Glibc.close(descriptor)
        unlink(path)
    }
}

/// This process's user and system CPU so far.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return cpuSeconds(usage)
}

/// The calling thread's CPU so far.
private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
