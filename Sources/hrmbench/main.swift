// hrmbench: the figures `make bench` prints, each next to a peer measured in the same run.
import Foundation

let scratch = try BenchScratch()
print("hrmbench — \(ProcessInfo.processInfo.processorCount) cores, scratch \(scratch.directory.path)\n")

let arguments = Set(CommandLine.arguments.dropFirst())
func wants(_ name: String) -> Bool { arguments.isEmpty || arguments.contains(name) }

if wants("decode") { try await DecodeBenchmark(scratch: scratch).run() }
if wants("store") { try await StoreBenchmark(scratch: scratch).run() }
if wants("daemon") { try await DaemonBenchmark(scratch: scratch).run() }
