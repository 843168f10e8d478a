import Foundation
import TestSupport
import Testing

@Suite("hrmd under a service manager")
struct ServiceEndToEndTests {
    @Test("sd_notify: READY=1 with STATUS, WATCHDOG=1 from the ingest loop, RELOADING=1 on SIGHUP, STOPPING=1 on SIGTERM")
    func notifications() async throws {
        let harness = try Harness()
        let socket = try NotifySocket(path: harness.directory.file("notify"))
        let config = harness.directory.file("hrmd.conf")
        try "[hrmd]\nsensor = mock:hz=4\n".write(toFile: config, atomically: true, encoding: .utf8)
        var environment = harness.environment
        environment["NOTIFY_SOCKET"] = socket.path
        environment["WATCHDOG_USEC"] = "2000000"
        let daemon = try ChildProcess(
            BuiltProducts.hrmd, ["--store", harness.store, "--config", config], environment: environment,
            outputDirectory: harness.directory.path)

        let ready = try await socket.waitFor("READY=1") { $0.contains("READY=1") }
        #expect(ready.contains("STATUS=1 sensor(s)"), "\(socket.messages)")
        try await socket.waitFor("WATCHDOG=1") { $0 == "WATCHDOG=1" }
        try await socket.waitFor("a STATUS with frames") { $0.hasPrefix("STATUS=") && $0.contains("frames") }

        // A reload picks up a second sensor without dropping the first.
        try "[hrmd]\nsensor = mock:hz=4\nsensor = mock:hz=4,location=wrist\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        try await socket.waitFor("RELOADING=1") { $0 == "RELOADING=1" }
        try await socket.waitFor("READY=1 with two sensors") { $0.contains("READY=1") && $0.contains("STATUS=2 sensor(s)") }
        try await eventually("the new sensor starts") { daemon.standardError.contains("sensor mock-2 started") }
        #expect(!daemon.standardError.contains("sensor mock-1 stopped"))

        // A bad configuration on reload keeps the running one.
        try "[hrmd]\nsensor = mock\nbogus = 1\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        try await socket.waitFor("READY=1 again after the failed reload") { _ in
            socket.messages.filter { $0.contains("READY=1") && $0.contains("STATUS=2 sensor(s)") }.count >= 2
        }

        daemon.send(SIGTERM)
        try await socket.waitFor("STOPPING=1") { $0 == "STOPPING=1" }
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
        #expect(daemon.standardError.contains("reload failed, the running configuration stays"))
    }

    @Test("without NOTIFY_SOCKET nothing is sent and hrmd runs as usual")
    func withoutServiceManager() async throws {
        let harness = try Harness()
        var environment = harness.environment
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        let result = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", harness.store, "--sensor", "mock", "--duration", "1"],
            environment: environment, in: harness.directory)
        #expect(result.exitCode == 0)
        #expect(result.stderr.contains("ready: 1 sensor(s)"))
    }
}
