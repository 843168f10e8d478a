import ANTDecoding
import Foundation
import TestSupport

/// ANT+: frames per second through the stream decoder and the heart-rate page reader
/// (against a Python decoder of the same stream), and the real `hrmd` reading 8 straps on
/// one fake stick (a pty): CPU time per 1000 broadcasts and peak RSS.
struct ANTBenchmark {
    let scratch: BenchScratch
    let count = 1_000_000
    let straps = 8
    let hz = 4.0

    func run() async throws {
        print("ant: \(count) ANT+ broadcasts through the decoder; hrmd with \(straps) straps on one fake stick")
        let stream = broadcasts()
        var checksum = 0
        let elapsed = try measure {
            var decoder = ANTFrameDecoder()
            var trackers = [HeartBeatTracker](repeating: HeartBeatTracker(), count: straps)
            var offset = 0
            while offset < stream.count {
                // Reads of 64 bytes, as a USB tty hands them over: frames split anywhere.
                let end = min(offset + 64, stream.count)
                for message in decoder.feed(stream[offset..<end]) {
                    let data = try BroadcastData(message)
                    let page = try HeartRatePage(data)
                    checksum &+= Int(page.heartRate) &+ trackers[Int(data.channel)].rrIntervals(for: page).count
                }
                offset = end
            }
        }
        let rate = Double(count) / elapsed
        report("hrmd ANT decoder (frames, pages, RR)", "\(format(rate / 1e6, 2)) M frames/s", "checksum \(checksum)")
        let file = scratch.file("ant.bin")
        try Data(stream).write(to: URL(fileURLWithPath: file))
        if let peer = try await pythonPeer(file) {
            report("peer: Python decoder of the same stream", "\(format(peer / 1e6, 2)) M frames/s")
            report("ratio hrmd / Python", "\(format(rate / peer, 1))×")
        }
        guard let short = try await runDaemon(seconds: 5), let long = try await runDaemon(seconds: 35) else { return }
        report("broadcasts sent (35 s run)", "\(long.broadcasts)", "\(long.stored) samples stored")
        report("hrmd CPU time per 1000 broadcasts, in all", "\(format(long.cpuSeconds / Double(long.broadcasts) * 1e6, 1)) ms")
        let marginal = (long.cpuSeconds - short.cpuSeconds) / Double(long.broadcasts - short.broadcasts)
        report("hrmd CPU time per 1000 broadcasts, marginal", "\(format(marginal * 1e6, 1)) ms", "35 s run minus 5 s run")
        report("hrmd peak RSS (VmHWM)", "\(format(Double(long.peakKB) / 1024, 1)) MB")
        print("")
    }

    /// `count` broadcasts from `straps` straps, with extended data, as one byte stream.
    private func broadcasts() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 18)
        for index in 0..<count {
            let strap = index % straps
            let n = index / straps
            let beats = n * 1024 / 4 / 900
            let beatTime = UInt16(truncatingIfNeeded: beats * 900)
            let data: [UInt8] = [
                UInt8(4 | ((n / 4) % 2 == 1 ? 0x80 : 0)), 0xFF, UInt8((beatTime &- 900) & 0xFF), UInt8((beatTime &- 900) >> 8),
                UInt8(beatTime & 0xFF), UInt8(beatTime >> 8), UInt8(truncatingIfNeeded: beats), 68,
            ]
            let payload = [UInt8(strap)] + data + [0x80, UInt8(strap + 1), 0x10, 120, 1]
            bytes += ANTMessage(id: ANTMessageID.broadcastData, payload: payload).encoded()
        }
        return bytes
    }

    private func pythonPeer(_ file: String) async throws -> Double? {
        let script = scratch.file("ant_peer.py")
        try """
            import sys, time
            data = open(sys.argv[1], 'rb').read()
            t = time.perf_counter(); n = 0; s = 0; buf = b''; last = {}
            for off in range(0, len(data), 64):
                buf += data[off:off + 64]
                i = 0
                while True:
                    j = buf.find(0xA4, i)
                    if j < 0 or j + 4 > len(buf): break
                    ln = buf[j + 1]
                    if j + ln + 4 > len(buf): break
                    frame = buf[j:j + ln + 4]; c = 0
                    for b in frame[:-1]: c ^= b
                    if c != frame[-1]: i = j + 1; continue
                    p = frame[3:-1]; ch = p[0]; d = p[1:9]
                    bt = d[4] | d[5] << 8; cnt = d[6]
                    prev = last.get(ch)
                    rr = 1 if prev and (cnt - prev[0]) % 256 == 1 else 0
                    last[ch] = (cnt, bt); s += d[7] + rr; n += 1; i = j + ln + 4
                buf = buf[i:]
            print(n / (time.perf_counter() - t))
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let child = try ChildProcess("/usr/bin/python3", [script, file], outputDirectory: scratch.directory.path)
        guard try await child.wait(timeout: .seconds(600)) == .exited(0) else {
            report("peer: Python decoder", "not measured", "python3 failed: \(child.standardError.prefix(200))")
            return nil
        }
        return Double(child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private struct Run {
        var broadcasts: Int
        var stored: Int
        var cpuSeconds: Double
        var peakKB: Int
    }

    private func runDaemon(seconds: Int) async throws -> Run? {
        let store = scratch.file("ant-\(seconds).sqlite")
        guard try await grantHRMD(store: store, in: scratch.directory.path, for: "hrmd with an ANT stick") else { return nil }
        let terminal = try PseudoTerminal()
        let stick = FakeANTStick(
            terminal: terminal, straps: (0..<straps).map { .init(deviceNumber: UInt16(100 + $0), rrTicks: UInt16(700 + 40 * $0)) }, hz: hz)
        stick.start()
        defer { stick.stop() }
        let daemon = try ChildProcess(
            BuiltProducts.hrmd, ["--store", store, "--duration", "\(seconds)", "--sensor", "ant:\(terminal.devicePath)"],
            outputDirectory: scratch.directory.path)
        let memory = try await MemoryPeak.watch(daemon)
        let termination = try await daemon.wait(timeout: .seconds(Double(seconds) + 60))
        guard termination == .exited(0), let usage = daemon.usage else {
            report("hrmd with an ANT stick", "failed", "\(termination): \(daemon.standardError.prefix(300))")
            return nil
        }
        let stored = number(before: " samples stored", in: daemon.standardError)
        return Run(broadcasts: stick.broadcasts, stored: stored, cpuSeconds: cpuSeconds(usage), peakKB: memory.peakKB)
    }
}
