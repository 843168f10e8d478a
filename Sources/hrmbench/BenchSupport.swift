import Foundation
import SensorBackends
import TestSupport

/// A scratch directory for one benchmark run.
struct BenchScratch {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory(prefix: "hrmbench") }
    func file(_ name: String) -> String { directory.file(name) }
}

/// Times `body` on the continuous clock, in seconds.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func cpuSeconds(_ usage: rusage) -> Double {
    Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Prints one figure line.
func report(_ name: String, _ value: String, _ note: String = "") {
    let padded = name.padding(toLength: 46, withPad: " ", startingAt: 0)
    print("  \(padded) \(value)\(note.isEmpty ? "" : "   (\(note))")")
}

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

/// A deterministic generator for benchmark data.
struct BenchRandom {
    private var generator: SeededGenerator
    init(state: UInt64) { generator = SeededGenerator(seed: state) }
    mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
}
