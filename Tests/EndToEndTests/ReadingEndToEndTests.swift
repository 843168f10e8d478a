import Foundation
import TestSupport
import Testing

@Suite("hrmctl stats, export, devices and sources")
struct ReadingEndToEndTests {
    /// A store holding 150 heart-rate samples, one a second from 10:00:00Z, values 60 + i % 30,
    /// from one chest strap.
    func populated() async throws -> Harness {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        var lines = [#"{"format":"hrmd-trace","version":1}"#,
                     #"{"t":"2026-11-20T09:59:59.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"read","characteristic":"2a38","value":"01"}"#]
        for index in 0..<150 {
            let hex = String(format: "06%02x", 60 + index % 30)
            let time = String(format: "2026-11-20T10:%02d:%02d.000Z", index / 60, index % 60)
            lines.append(#"{"t":"\#(time)","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"\#(hex)"}"#)
        }
        let trace = harness.directory.file("known.trace.jsonl")
        try lines.joined(separator: "\n").write(toFile: trace, atomically: true, encoding: .utf8)
        let replay = try await harness.hrmctl(["replay", "--store", harness.store, trace], withStore: false)
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        return harness
    }

    func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("stats --by 1m: one object per non-empty bucket with count, min, avg, max and unit")
    func stats() async throws {
        let harness = try await populated()
        let result = try await harness.hrmctl(["stats", "--by", "1m", "--output", "json", "--store", harness.store], withStore: false)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let buckets = jsonLines(result.stdout)
        #expect(buckets.map { $0["count"] as? Int } == [60, 60, 30])
        #expect(buckets.first?["start"] as? String == "2026-11-20T10:00:00.000Z")
        #expect(buckets.first?["end"] as? String == "2026-11-20T10:01:00.000Z")
        #expect(buckets.allSatisfy { $0["min"] as? Double == 60 && $0["max"] as? Double == 89 && $0["unit"] as? String == "count/min" })
        #expect(buckets.allSatisfy { $0["avg"] as? Double == 74.5 })
        let perSecond = try await harness.hrmctl(["stats", "--by", "1h", "--unit", "count/s", "--output", "json", "--store", harness.store], withStore: false)
        let hour = try #require(jsonLines(perSecond.stdout).first)
        #expect(hour["count"] as? Int == 150 && hour["min"] as? Double == 1 && hour["unit"] as? String == "count/s")
        let empty = try await harness.hrmctl(["stats", "--by", "1d", "--since", "2020-01-01T00:00:00Z", "--until", "2020-01-02T00:00:00Z", "--store", harness.store], withStore: false)
        #expect(empty.exitCode == 0 && empty.stdout.contains("no samples"))
        let bad = try await harness.hrmctl(["stats", "--by", "2m", "--store", harness.store], withStore: false)
        #expect(bad.exitCode == 64)
    }

    @Test("export: csv, jsonl, one FHIR R4 Bundle of LOINC 8867-4 Observations, Open mHealth lines")
    func export() async throws {
        let harness = try await populated()
        func export(_ format: String, _ extra: [String] = []) async throws -> CommandResult {
            try await harness.hrmctl(["export", "--format", format, "--store", harness.store] + extra, withStore: false)
        }
        #expect(try await export("csv").stdout.split(separator: "\n").count == 151)
        #expect(jsonLines(try await export("jsonl").stdout).count == 150)

        let file = harness.directory.file("bundle.json")
        let fhir = try await export("fhir", ["--output", file])
        #expect(fhir.exitCode == 0 && fhir.stdout.isEmpty)
        let bundle = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        #expect(bundle["resourceType"] as? String == "Bundle" && bundle["type"] as? String == "collection")
        let entries = try #require(bundle["entry"] as? [[String: Any]])
        #expect(entries.count == 150)
        let observation = try #require(entries.first?["resource"] as? [String: Any])
        let coding = ((observation["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first
        #expect(coding?["system"] as? String == "http://loinc.org" && coding?["code"] as? String == "8867-4")
        let quantity = observation["valueQuantity"] as? [String: Any]
        #expect(quantity?["code"] as? String == "/min" && quantity?["system"] as? String == "http://unitsofmeasure.org")
        #expect(quantity?["value"] as? Double == 60)
        #expect(observation["effectiveDateTime"] as? String == "2026-11-20T10:00:00.000Z")
        #expect(((observation["bodySite"] as? [String: Any])?["text"]) as? String == "chest")

        let omh = jsonLines(try await export("omh").stdout)
        #expect(omh.count == 150)
        let schema = (omh.first?["header"] as? [String: Any])?["schema_id"] as? [String: Any]
        #expect(schema?["name"] as? String == "heart-rate" && schema?["version"] as? String == "2.0")

        #expect(try await export("fhir", ["--type", "rr-interval"]).exitCode == 64)
        #expect(try await export("csv", ["--output", harness.directory.file("no/such/dir.csv")]).exitCode == 73)
    }

    @Test("devices and sources say what wrote what")
    func inventory() async throws {
        let harness = try await populated()
        let devices = jsonLines(try await harness.hrmctl(["devices", "--output", "json", "--store", harness.store], withStore: false).stdout)
        #expect(devices.count == 1)
        #expect(devices.first?["identifier"] as? String == "AA:BB:CC:DD:EE:FF")
        #expect(devices.first?["location"] as? String == "chest")
        #expect(devices.first?["samples"] as? Int == 150)
        #expect(devices.first?["lastSeen"] as? String == "2026-11-20T10:02:29.000Z")
        let sources = jsonLines(try await harness.hrmctl(["sources", "--output", "json", "--store", harness.store], withStore: false).stdout)
        #expect(sources.first?["source"] as? String == "hrmd" && sources.first?["samples"] as? Int == 150)
    }

    @Test("samples --device, --source, --limit, --reverse")
    func sampleFilters() async throws {
        let harness = try await populated()
        func samples(_ extra: [String]) async throws -> [[String: Any]] {
            jsonLines(try await harness.hrmctl(["samples", "--output", "json", "--store", harness.store] + extra, withStore: false).stdout)
        }
        let newest = try await samples(["--limit", "2", "--reverse"])
        #expect(newest.map { $0["start"] as? String } == ["2026-11-20T10:02:29.000Z", "2026-11-20T10:02:28.000Z"])
        #expect(try await samples(["--device", "AA:BB:CC:DD:EE:FF"]).count == 150)
        #expect(try await samples(["--device", "11:22:33:44:55:66"]).isEmpty)
        #expect(try await samples(["--source", "someone-else"]).isEmpty)
    }

    @Test("delete: a source's range goes, others stay; without a terminal --yes is required")
    func delete() async throws {
        let harness = try await populated()
        let range = ["--since", "2026-11-20T10:01:00Z", "--until", "2026-11-20T10:02:00Z"]
        let refused = try await harness.hrmctl(["delete", "--source", "hrmd", "--store", harness.store] + range, withStore: false)
        #expect(refused.exitCode == 64)
        #expect(refused.stderr.contains("--yes"))
        let other = try await harness.hrmctl(["delete", "--source", "nobody", "--yes", "--store", harness.store] + range, withStore: false)
        #expect(other.stdout.contains("no samples"))
        let deleted = try await harness.hrmctl(["delete", "--source", "hrmd", "--yes", "--store", harness.store] + range, withStore: false)
        #expect(deleted.exitCode == 0)
        #expect(deleted.stdout.contains("deleted 60 heart-rate samples of hrmd"))
        #expect(try await harness.samples().count == 90)
    }

    @Test("stats --zones: time in each zone of a maximum heart rate")
    func zones() async throws {
        let harness = try await populated()
        let result = try await harness.hrmctl(["stats", "--zones", "--max-hr", "100", "--output", "json", "--store", harness.store], withStore: false)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let seconds = jsonLines(result.stdout).map { $0["seconds"] as? Double }
        #expect(seconds == [0, 0, 50, 50, 50, 0])
        let missing = try await harness.hrmctl(["stats", "--zones", "--store", harness.store], withStore: false)
        #expect(missing.exitCode == 64)
        let both = try await harness.hrmctl(["stats", "--hrv", "--by", "1m", "--store", harness.store], withStore: false)
        #expect(both.exitCode == 64)
    }

    @Test("stats --hrv: mean NN, SDNN and RMSSD from stored RR intervals")
    func variability() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "rr-interval")
        // One beat a second, alternating 1000 and 1048 (1/1024 s): 976.5625 and 1023.4375 ms.
        var lines = [#"{"format":"hrmd-trace","version":1}"#]
        for index in 0..<60 {
            let raw = index % 2 == 0 ? 1000 : 1048
            let hex = String(format: "103c%02x%02x", raw & 0xFF, raw >> 8)
            let time = String(format: "2026-11-20T10:%02d:%02d.000Z", index / 60, index % 60)
            lines.append(#"{"t":"\#(time)","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"\#(hex)"}"#)
        }
        let trace = harness.directory.file("beats.trace.jsonl")
        try lines.joined(separator: "\n").write(toFile: trace, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl(["replay", "--store", harness.store, trace], withStore: false)
        let result = try await harness.hrmctl(["stats", "--hrv", "--output", "json", "--store", harness.store], withStore: false)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let hrv = try #require(jsonLines(result.stdout).first)
        #expect(hrv["beats"] as? Int == 60)
        #expect(abs((hrv["meanNN"] as? Double ?? 0) - 1000) < 1e-6)
        #expect(abs((hrv["rmssd"] as? Double ?? 0) - 46.875) < 1e-6)
        #expect(abs((hrv["sdnn"] as? Double ?? 0) - 23.6348) < 1e-3)
    }

    @Test("watch follows what another process stores, and only what comes after it starts")
    func watch() async throws {
        let harness = try await populated()
        let watcher = try ChildProcess(
            BuiltProducts.hrmctl, ["watch", "--output", "json", "--interval", "0.1", "--store", harness.store],
            environment: harness.environment, outputDirectory: harness.directory.path)
        // The watcher takes its starting anchor some time after it opens the store: replay new
        // samples, two at a time, until it prints some. It must then print every one stored
        // from there on, in order, and none stored before the first it printed.
        try await eventually("the watcher has opened the store") { hasOpen(harness.store, pid: watcher.pid) }
        var replayed: [Double] = []
        func replayTwo() async throws {
            let value = 100 + replayed.count
            let trace = harness.directory.file("later-\(value).trace.jsonl")
            var lines = [#"{"format":"hrmd-trace","version":1}"#]
            for offset in 0..<2 {
                let bpm = value + offset
                let time = String(format: "2026-11-20T11:%02d:%02d.000Z", bpm / 60, bpm % 60)
                lines.append(
                    #"{"t":"\#(time)","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"06\#(String(format: "%02x", bpm))"}"#)
                replayed.append(Double(bpm))
            }
            try lines.joined(separator: "\n").write(toFile: trace, atomically: true, encoding: .utf8)
            _ = try await harness.hrmctl(["replay", "--store", harness.store, trace], withStore: false)
        }
        try await eventually("the watcher prints samples stored after it started", checkingEvery: .milliseconds(300)) {
            try await replayTwo()
            return !jsonLines(watcher.standardOutput).isEmpty
        }
        try await eventually("the watcher prints the last sample stored") {
            jsonLines(watcher.standardOutput).last?["value"] as? Double == replayed.last
        }
        watcher.send(SIGTERM)
        _ = try await watcher.wait()
        let seen = jsonLines(watcher.standardOutput).compactMap { $0["value"] as? Double }
        let first = try #require(seen.first)
        #expect(seen == Array(replayed.drop { $0 != first }), "\(seen) of \(replayed)")
    }

    @Test("plot draws the range in the terminal and as SVG")
    func plot() async throws {
        let harness = try await populated()
        let text = try await harness.hrmctl(["plot", "--width", "30", "--height", "6", "--store", harness.store], withStore: false)
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("│") && text.stdout.contains("150 samples"))
        #expect(text.stdout.split(separator: "\n").count == 9)
        let file = harness.directory.file("hr.svg")
        let svg = try await harness.hrmctl(["plot", "--svg", file, "--store", harness.store], withStore: false)
        #expect(svg.exitCode == 0)
        let picture = try String(contentsOfFile: file, encoding: .utf8)
        #expect(picture.hasPrefix("<svg") && picture.contains("<polyline"))
        let points = picture.components(separatedBy: "points=\"").last?.split(separator: "\"").first?.split(separator: " ")
        #expect(points?.count == 150)
    }
}

/// Whether process `pid` holds `path` open (one of its /proc fd links points at it).
private func hasOpen(_ path: String, pid: pid_t) -> Bool {
    guard let resolved = realpath(path, nil) else { return false }
    defer { free(resolved) }
    let target = String(cString: resolved)
    let directory = "/proc/\(pid)/fd"
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return entries.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)")) == target }
}
