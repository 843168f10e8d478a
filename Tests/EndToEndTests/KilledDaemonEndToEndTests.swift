import Foundation
import TestSupport
import Testing

@Suite("hrmd killed during live ingest")
struct KilledDaemonEndToEndTests {
    /// Twelve mock straps at 4 Hz: many small writes while readers come and go.
    static let straps = (1...12).flatMap { ["--sensor", "mock:hz=4,seed=\($0),id=strap-\($0),contact-loss=0"] }

    /// The stored heart-rate and RR-interval samples, each as the JSON line hrmctl prints.
    func sampleLines(_ harness: Harness) async throws -> [Substring] {
        var lines: [Substring] = []
        for type in ["heart-rate", "rr-interval"] {
            let result = try await harness.hrmctl("samples", "--type", type, "--output", "json")
            #expect(result.exitCode == 0, "\(type): \(result.stderr)")
            lines += result.stdout.split(separator: "\n")
        }
        return lines
    }

    @Test("SIGKILL while straps stream: the store is intact and keeps every sample read before; a restart stores more beside them")
    func killDuringIngest() async throws {
        let harness = try Harness()
        let grant = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate", "rr-interval", "active-energy-burned")
        #expect(grant.exitCode == 0, "\(grant.stderr)")

        let daemon = try harness.startDaemon(Self.straps)
        var seen: [Substring] = []
        try await eventually("every strap has stored") {
            seen = try await sampleLines(harness)
            return (1...12).allSatisfy { strap in seen.contains { $0.contains(#""identifier":"strap-\#(strap)""#) } }
        }
        let earlier = seen
        try await eventually("more samples arrive while hrmd runs") {
            seen = try await sampleLines(harness)
            return seen.count > earlier.count
        }
        let kept = Set(seen).isSuperset(of: earlier)
        #expect(kept, "a later read keeps what an earlier one saw")
        #expect(daemon.isRunning, "\(daemon.standardError)")

        daemon.send(SIGKILL)
        #expect(try await daemon.wait() == .signalled(SIGKILL))
        #expect(try StoreFile.integrityCheck(harness.store) == "ok")
        let afterKill = try await sampleLines(harness)
        #expect(afterKill.count >= seen.count)
        let lost = Set(seen).subtracting(afterKill)
        #expect(lost.isEmpty, "\(lost.count) samples read before the kill are gone, such as \(lost.first ?? "")")

        let restart = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", harness.store, "--duration", "2"] + Self.straps,
            environment: harness.environment, in: harness.directory)
        #expect(restart.exitCode == 0, "\(restart.stderr)")
        let afterRestart = try await sampleLines(harness)
        #expect(afterRestart.count > afterKill.count, "the restarted hrmd stores more")
        let lostInRestart = Set(afterKill).subtracting(afterRestart)
        #expect(lostInRestart.isEmpty, "\(lostInRestart.count) samples stored before the restart are gone, such as \(lostInRestart.first ?? "")")
        #expect(try StoreFile.integrityCheck(harness.store) == "ok")
    }
}
