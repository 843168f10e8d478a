import Foundation
import Logging
import Recordings
import SensorFrames
import TestSupport
import Testing
import Timestamps

@Suite("Trace recorder")
struct TraceRecorderTests {
    func frames(_ count: Int) -> [SensorFrame] {
        (0..<count).map { index in
            SensorFrame(
                time: Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000 + Int64(index) * 250_000),
                transport: .ble, device: "AA:BB:CC:DD:EE:FF", kind: .notify, characteristic: .heartRateMeasurement,
                value: HeartRateMeasurement(heartRate: UInt16(60 + index % 50), sensorContact: .detected, rrIntervals: [800]).encoded())
        }
    }

    @Test("rotates by size; every file has a header; reading back gives the same frames in order")
    func rotation() async throws {
        let directory = try TemporaryDirectory()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let recorder = TraceRecorder(directory: directory.path, maxFileBytes: 4096, logger: logger)
        let written = frames(200)
        async let run: Void = recorder.run()
        for frame in written { recorder.record(frame) }
        recorder.finish()
        await run
        #expect(recorder.snapshot.written == 200 && recorder.snapshot.dropped == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files.count > 3)
        #expect(files.count == recorder.snapshot.files)
        var read: [SensorFrame] = []
        for file in files {
            let path = directory.file(file)
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(size <= 4096)
            for entry in try TraceRecording(path: path) {
                guard case .frame(let frame, _) = entry else {
                    Issue.record("bad line in \(file): \(entry)")
                    continue
                }
                read.append(frame)
            }
        }
        #expect(read == written)
    }

    @Test("an unusable directory is reported before recording starts")
    func badDirectory() throws {
        let directory = try TemporaryDirectory()
        #expect(TraceRecorder.checkDirectory(directory.path) == nil)
        #expect(TraceRecorder.checkDirectory(directory.file("missing")) != nil)
        let file = directory.file("plain")
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        #expect(TraceRecorder.checkDirectory(file)?.contains("not a directory") == true)
    }

    @Test("recordings are told apart by content")
    func kinds() throws {
        let directory = try TemporaryDirectory()
        let text = directory.file("x.txt")
        try "hello".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(throws: RecordingError.self) { try TraceRecording.kind(of: text) }
        #expect(throws: RecordingError.self) { try TraceRecording.kind(of: directory.file("absent")) }
        let trace = directory.file("t.jsonl")
        try #"{"format":"hrmd-trace","version":1}"#.write(toFile: trace, atomically: true, encoding: .utf8)
        #expect(try TraceRecording.kind(of: trace) == .trace)
    }
}
