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

        let ready = try await socket.waitFor { $0.contains("READY=1") }
        #expect(ready?.contains("STATUS=1 sensor(s)") == true, "\(socket.messages)")
        #expect(try await socket.waitFor { $0 == "WATCHDOG=1" } != nil)
        #expect(try await socket.waitFor { $0.hasPrefix("STATUS=") && $0.contains("frames") } != nil)

        // A reload picks up a second sensor without dropping the first.
        try "[hrmd]\nsensor = mock:hz=4\nsensor = mock:hz=4,location=wrist\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        #expect(try await socket.waitFor { $0 == "RELOADING=1" } != nil)
        let reloaded = try await socket.waitFor { $0.contains("READY=1") && $0.contains("STATUS=2 sensor(s)") }
        #expect(reloaded != nil, "\(socket.messages)")
        try await harness.eventually("the new sensor starts") { daemon.standardError.contains("sensor mock-2 started") }
        #expect(!daemon.standardError.contains("sensor mock-1 stopped"))

        // A bad configuration on reload keeps the running one.
        try "[hrmd]\nsensor = mock\nbogus = 1\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        let readyAgain = try await socket.waitFor { _ in
            socket.messages.filter { $0.contains("READY=1") && $0.contains("STATUS=2 sensor(s)") }.count >= 2
        }
        #expect(readyAgain != nil, "\(socket.messages)")

        daemon.send(SIGTERM)
        #expect(try await socket.waitFor { $0 == "STOPPING=1" } != nil)
        #expect(try await daemon.wait(timeout: .seconds(15)) == .exited(0), "\(daemon.standardError)")
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
