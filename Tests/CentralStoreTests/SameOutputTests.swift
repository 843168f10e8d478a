import CentralStore
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import TestSupport
import Testing
import Timestamps

/// The same samples in a store file and, synced by one gateway, in the central store: hrmctl
/// prints the same for both, but for the gateway (a last JSON key, a last CSV column).
@Suite("hrmctl prints the same from a store file and the central store", .timeLimit(.minutes(3)))
struct SameOutputTests {
    @Test("samples, export, stats (1m, 1h, 1d, HRV, zones), devices and sources")
    func sameOutput() async throws {
        let postgres = try await TemporaryPostgres()
        let directory = try TemporaryDirectory(prefix: "hrmd-same")
        let path = directory.file("s.sqlite")
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        let hrmd = HealthSource(name: "hrmd", version: "0.1.0")
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .rrInterval)
        let device = HealthDevice(localIdentifier: "strap-1", name: "strap one", manufacturer: "acme", model: "h10")
        let base = CentralReaderTests.base
        var rates: [QuantitySample] = []
        var beats: [QuantitySample] = []
        var beatAt = base
        for second in 0..<4000 {
            let at = Timestamp(microsecondsSinceEpoch: base + Int64(second) * 1_000_000)
            rates.append(try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: Double(55 + (second * 13) % 120)), start: at, end: at,
                device: device, metadata: SampleMetadata(sensorLocation: .chest, sensorContact: true)))
            let milliseconds = Double(800 + (second * 37) % 200)
            let end = beatAt + Int64(milliseconds * 1000)
            beats.append(try QuantitySample(
                type: .rrInterval, quantity: Quantity(unit: .millisecond, doubleValue: milliseconds),
                start: Timestamp(microsecondsSinceEpoch: beatAt), end: Timestamp(microsecondsSinceEpoch: end), device: device,
                metadata: SampleMetadata(sensorLocation: .chest)))
            beatAt = end + (second % 500 == 499 ? 3_000_000 : 0)
        }
        _ = try store.save(rates, from: hrmd)
        _ = try store.save(beats, from: hrmd)
        // The gateway sends what the file's anchored changes report, as hrmd's sync does.
        let gateway = try CentralGateway(connection: try postgres.connect(), name: "gw-1")
        for type in [SampleType.heartRate, .rrInterval] {
            var anchor: Int64 = 0
            while true {
                let changes = try store.changes(of: type, since: anchor, limit: 1500)
                guard !changes.added.isEmpty else { break }
                _ = try gateway.apply(SyncBatch(type: type, from: anchor == 0 ? 0 : anchor, to: changes.anchor, added: changes.added, deleted: []))
                anchor = changes.anchor
            }
        }
        gateway.close()
        let uri = CentralReaderTests.uri(postgres)
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "Asia/Kolkata"
        environment.removeValue(forKey: "HRMD_STORE")
        let since = RFC3339.string(from: Timestamp(microsecondsSinceEpoch: base - 1))
        let commands: [[String]] = [
            ["samples", "--since", since, "--output", "json"],
            ["samples", "--since", since, "--output", "csv", "--unit", "count/s"],
            ["samples", "--since", since, "--reverse", "--limit", "50"],
            ["samples", "--since", since, "--type", "rr-interval", "--output", "json", "--limit", "300"],
            ["export", "--since", since, "--format", "jsonl"],
            ["export", "--since", since, "--format", "fhir"],
            ["stats", "--since", since, "--by", "1m", "--output", "json"],
            ["stats", "--since", since, "--by", "1h"],
            ["stats", "--since", since, "--by", "1d", "--output", "csv"],
            ["stats", "--since", since, "--hrv", "--output", "json"],
            ["stats", "--since", since, "--zones", "--max-hr", "190"],
            ["devices", "--output", "json"],
            ["sources"],
        ]
        for command in commands {
            let file = try await ChildProcess.run(BuiltProducts.hrmctl, command + ["--store", path], environment: environment, in: directory)
            let central = try await ChildProcess.run(BuiltProducts.hrmctl, command + ["--store", uri], environment: environment, in: directory)
            #expect(file.exitCode == 0 && central.exitCode == 0, "\(command): \(file.stderr) \(central.stderr)")
            var expected = file.stdout
            if command.contains("json") || command.contains("jsonl") {
                if command[0] != "stats" && command[0] != "devices" {
                    expected = expected.replacingOccurrences(of: "}}\n", with: "},\"gateway\":\"gw-1\"}\n")
                }
            } else if command.contains("csv") && command[0] == "samples" {
                expected = expected.split(separator: "\n").enumerated().map { $0.offset == 0 ? "\($0.element),gateway" : "\($0.element),gw-1" }
                    .joined(separator: "\n") + "\n"
            } else if command[0] == "samples" {
                expected = expected.split(separator: "\n").enumerated().map { line in
                    line.offset == 0 ? "\(line.element)  GATEWAY" : line.element.padding(toLength: line.element.count + 3, withPad: " ", startingAt: 0) + "  gw-1"
                }.joined(separator: "\n") + "\n"
            } else if command[0] == "export" {
                // FHIR: ids are each store's own; entries' URNs are random; the bundle's
                // timestamp is when it was made.
                func normalized(_ text: String) -> String {
                    text.replacingOccurrences(of: #""id":"hrmd-[0-9]+""#, with: "ID", options: .regularExpression)
                        .replacingOccurrences(of: #""fullUrl":"urn:uuid:[^"]+""#, with: "URN", options: .regularExpression)
                        .replacingOccurrences(of: #""timestamp":"[^"]+""#, with: "TS", options: .regularExpression)
                }
                #expect(Self.firstDifference(normalized(central.stdout), normalized(expected)) == nil, "\(command)")
                continue
            }
            #expect(Self.firstDifference(central.stdout, expected) == nil, "\(command)")
        }
        // People and workouts stay on each gateway: what needs them is refused in one line
        // that says where to go, and nothing reaches standard output.
        let refused: [([String], String)] = [
            (["person", "list"], "keeps no people"),
            (["stats", "--since", since, "--by", "1h", "--person", "ann"], "keeps no people"),
            (["stats", "--since", since, "--hrv", "--person", "ann"], "keeps no people"),
            (["stats", "--since", since, "--zones", "--person", "ann"], "keeps no people"),
            (["samples", "--since", since, "--person", "ann"], "keeps no people"),
            (["workout", "list"], "hrmd.workouts"),
        ]
        for (command, words) in refused {
            let central = try await ChildProcess.run(BuiltProducts.hrmctl, command + ["--store", uri], environment: environment, in: directory)
            #expect(central.exitCode != 0 && central.stdout.isEmpty, "\(command): \(central.exitCode) \(central.stdout)")
            let lines = central.stderr.split(separator: "\n")
            #expect(lines.count == 1 && central.stderr.contains(words), "\(command): \(central.stderr)")
        }
    }

    /// The first line where `a` and `b` differ, both ways, or nil when they are the same.
    static func firstDifference(_ a: String, _ b: String) -> String? {
        guard a != b else { return nil }
        let left = a.split(separator: "\n", omittingEmptySubsequences: false)
        let right = b.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(left.count, right.count) {
            let x = index < left.count ? String(left[index]) : "<none>"
            let y = index < right.count ? String(right[index]) : "<none>"
            if x != y { return "line \(index + 1): \(x) ≠ \(y)" }
        }
        return "differ"
    }
}
