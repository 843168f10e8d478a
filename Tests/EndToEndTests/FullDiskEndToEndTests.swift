import Foundation
import GRDB
import TestSupport
import Testing

@Suite("hrmd on a disk that fills", .serialized)
struct FullDiskEndToEndTests {
    /// A tmpfs of `size` mounted on a new directory of `harness`, unmounted by `release()`.
    final class SmallDisk {
        let path: String

        init(in harness: Harness, size: String) async throws {
            path = harness.directory.file("small-disk")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let mount = try await ChildProcess.run(
                "/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0755", "tmpfs", path], in: harness.directory)
            try #require(mount.exitCode == 0, "mount: \(mount.stderr)")
        }

        /// Fills what is left with one file; returns its path.
        func fill() throws -> String {
            let filler = path + "/filler"
            let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            let block = [UInt8](repeating: 0x5A, count: 4096)
            while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            #expect(errno == ENOSPC)
            return filler
        }

        func release() async throws {
            _ = try await ChildProcess.run("/bin/umount", ["-l", path], in: TemporaryDirectory())
        }
    }

    /// Whether this machine lets the tests mount a tmpfs (root with CAP_SYS_ADMIN; a container
    /// may withhold it): tried once, on a scratch directory.
    static let canMountTmpfs: Bool = {
        guard geteuid() == 0, let scratch = try? TemporaryDirectory(prefix: "hrmd-mount-probe") else { return false }
        func run(_ tool: String, _ arguments: [String]) -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", scratch.path]) else { return false }
        return run("/bin/umount", [scratch.path])
    }()

    static let straps = (1...20).flatMap { ["--sensor", "mock:hz=4,seed=\($0),id=strap-\($0),contact-loss=0"] }

    @Test("the store and the traces on a full disk: hrmd keeps its straps, says so once, stores again when space returns, loses nothing it kept, and the store stays whole and readable",
          .enabled(if: canMountTmpfs, "mounting a small tmpfs needs root with CAP_SYS_ADMIN"))
    func storeOnFullDisk() async throws {
        let harness = try Harness()
        let disk = try await SmallDisk(in: harness, size: "2m")
        do {
            let store = disk.path + "/hr.sqlite", traces = disk.path + "/traces"
            try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: false)
            #expect(try await harness.hrmctl(["auth", "grant", "hrmd", "all", "--store", store], withStore: false).exitCode == 0)
            let daemon = try ChildProcess(
                BuiltProducts.hrmd, ["--store", store, "--record", traces, "--log-level", "debug"] + Self.straps,
                environment: harness.environment, outputDirectory: harness.directory.path)
            try await eventually("hrmd stores") { try StoreFile.heartRateCount(store) > 200 }

            let filler = try disk.fill()
            try await eventually("hrmd says the store cannot be written") {
                daemon.standardError.contains("cannot write to the store")
            }
            // A negative check, made after two more flushes that kept their samples for the next write.
            let failed = daemon.flushes
            try await eventually("two more flushes that could not write") {
                daemon.flushes.dropFirst(failed.count).filter { $0.kept > 0 }.count >= 2
            }
            #expect(daemon.isRunning, "\(daemon.standardError)")
            #expect(daemon.standardError.components(separatedBy: "cannot write to the store").count == 2, "said once")
            // Readers go on reading what was stored.
            let read = try await harness.hrmctl(["samples", "--output", "json", "--store", store], withStore: false)
            #expect(read.exitCode == 0, "\(read.stderr)")
            let storedWhileFull = try StoreFile.heartRateCount(store)

            try FileManager.default.removeItem(atPath: filler)
            try await eventually("hrmd stores again") {
                let stored = try StoreFile.heartRateCount(store)
                return daemon.standardError.contains("the store is writable again") && stored > storedWhileFull + 80
            }
            daemon.send(SIGTERM)
            #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
            #expect(try StoreFile.integrityCheck(store) == "ok")
            // Samples kept while the disk was full were written once it was not: none was dropped.
            #expect(!daemon.standardError.contains("dropped the"), "\(daemon.standardError)")
            for name in try FileManager.default.contentsOfDirectory(atPath: traces) {
                let text = try String(contentsOfFile: traces + "/" + name, encoding: .utf8)
                #expect(text.isEmpty || text.hasSuffix("\n"), "\(name) ends inside a line")
            }
        } catch {
            try await disk.release()
            throw error
        }
        try await disk.release()
    }
}
