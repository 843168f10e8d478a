import Foundation
import SensorFrames
import TestSupport

/// Frames per second through the 0x2A37 decoder, against a Python `struct` decoder of the
/// same frames (the peer).
struct DecodeBenchmark {
    let scratch: BenchScratch
    let count = 1_000_000

    func run() async throws {
        print("decode: \(count) Heart Rate Measurement frames (mixed formats, 0–4 RR intervals)")
        var random = BenchRandom(state: 42)
        let frames: [[UInt8]] = (0..<count).map { _ in
            let rr = (0..<random.next(in: 0...4)).map { _ in UInt16(random.next(in: 300...1500)) }
            let measurement = HeartRateMeasurement(
                heartRate: UInt16(random.next(in: 40...200)),
                sensorContact: [.unsupported, .notDetected, .detected][random.next(in: 0...2)],
                energyExpended: random.next(in: 0...9) == 0 ? UInt16(random.next(in: 0...5000)) : nil,
                rrIntervals: rr)
            return measurement.encoded(format: random.next(in: 0...3) == 0 ? .uint16 : nil)
        }
        var checksum = 0
        let elapsed = try measure {
            for frame in frames {
                let decoded = try HeartRateMeasurement(decoding: frame)
                checksum &+= Int(decoded.heartRate) &+ decoded.rrIntervals.count
            }
        }
        let rate = Double(count) / elapsed
        report("hrmd decoder", "\(format(rate / 1e6, 2)) M frames/s", "checksum \(checksum)")

        let hexFile = scratch.file("frames.hex")
        try frames.map { HexBytes.string($0) }.joined(separator: "\n").write(toFile: hexFile, atomically: true, encoding: .utf8)
        if let peerRate = try await pythonPeer(hexFile) {
            report("peer: Python struct decoder", "\(format(peerRate / 1e6, 2)) M frames/s")
            report("ratio hrmd / Python", "\(format(rate / peerRate, 1))×")
        }
        print("")
    }

    private func pythonPeer(_ hexFile: String) async throws -> Double? {
        let script = scratch.file("decode_peer.py")
        try """
            import struct, sys, time
            frames = [bytes.fromhex(l) for l in open(sys.argv[1]).read().split()]
            def decode(b):
                flags = b[0]; i = 1
                if flags & 1: hr = struct.unpack_from('<H', b, i)[0]; i += 2
                else: hr = b[i]; i += 1
                energy = None
                if flags & 8: energy = struct.unpack_from('<H', b, i)[0]; i += 2
                rr = []
                if flags & 16:
                    while i + 1 < len(b): rr.append(struct.unpack_from('<H', b, i)[0]); i += 2
                return hr, energy, rr
            t = time.perf_counter(); s = 0
            for f in frames:
                hr, e, rr = decode(f); s += hr + len(rr)
            print(len(frames) / (time.perf_counter() - t))
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let child = try scratch.python(script, [hexFile])
        let termination = try await child.wait(timeout: .seconds(300))
        guard termination == .exited(0) else {
            report("peer: Python struct decoder", "not measured", "python3 failed: \(child.standardError.prefix(200))")
            return nil
        }
        return Double(child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
