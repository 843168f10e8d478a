// hrmbench: the figures `make bench` prints, each next to a peer measured in the same run.
import Foundation
import TestSupport

let names = ["decode", "series", "size", "read", "store", "replay", "upgrade", "daemon", "ant", "ble", "att", "year", "service", "workout"]
let arguments = Set(CommandLine.arguments.dropFirst())
if let unknown = arguments.first(where: { !names.contains($0) }) {
    FileHandle.standardError.write(Data("hrmbench: no benchmark \(unknown) (known: \(names.joined(separator: ", ")))\n".utf8))
    exit(64)
}

// hrmd and hrmctl are the root package's (HRMD_BIN_DIR, as `make bench` sets it), not this package's.
if !FileManager.default.isExecutableFile(atPath: BuiltProducts.hrmctl) {
    FileHandle.standardError.write(
        Data("hrmbench: no hrmctl in \(BuiltProducts.directory): HRMD_BIN_DIR names the root package's release build (.build/release)\n".utf8))
}

let scratch = try BenchScratch()
print("hrmbench — \(ProcessInfo.processInfo.processorCount) cores, scratch \(scratch.directory.path)\n")

func wants(_ name: String) -> Bool { arguments.isEmpty || arguments.contains(name) }

if wants("decode") { try await DecodeBenchmark(scratch: scratch).run() }
if wants("series") { try SeriesBenchmark().run() }
var week: RecordingFiles?
if wants("size") { week = try await SizeBenchmark(scratch: scratch).run() }
if wants("read") { try await ReadBenchmark(scratch: scratch, week: week).run() }
var bulkSaveSeconds: Double?
if wants("store") { bulkSaveSeconds = try await StoreBenchmark(scratch: scratch).run() }
if wants("replay") { try await ReplayBenchmark(scratch: scratch, bulkSaveSeconds: bulkSaveSeconds).run() }
if wants("upgrade") { try await UpgradeBenchmark(scratch: scratch).run() }
if wants("daemon") { try await DaemonBenchmark(scratch: scratch).run() }
if wants("ant") { try await ANTBenchmark(scratch: scratch).run() }
if wants("ble") { try await BLEBenchmark(scratch: scratch).run() }
if wants("att") { try await ATTBenchmark(scratch: scratch).run() }
var yearStore: String?
if wants("year") { yearStore = try await YearBenchmark(scratch: scratch).run() }
if wants("service") { try await ServiceBenchmark(scratch: scratch, yearStore: yearStore).run() }
if wants("workout") { try await WorkoutBenchmark(scratch: scratch).run() }

try? FileManager.default.removeItem(atPath: scratch.directory.path)
