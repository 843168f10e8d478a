import ByteSources
import Foundation
import Recordings
import SensorFrames
import TestSupport
import Testing

@Suite("FIT files as recordings")
struct FITRecordingTests {
    let start: UInt32 = 1_100_000_000

    /// A strap's device_info, five records a second apart, and RR beats of 0.75 s.
    func activity(relative: Bool = false) -> [UInt8] {
        var builder = FITBuilder()
        builder.define(local: 0, global: 23, fields: [.uint8(0), .uint8(1), .uint16(2), .uint32z(3), .uint16(4)])
        builder.data(local: 0, [1, 120, 1, 0, 0x39, 0x30, 0, 0, 0x05, 0x0B])  // Garmin strap, serial 12345, product 2821
        builder.define(local: 1, global: 20, fields: [.timestamp, .uint8(3)])
        let first = relative ? UInt32(5000) : start
        for second in 0..<5 { builder.data(local: 1, le32(first + UInt32(second)) + [UInt8(70 + second)]) }
        builder.define(local: 2, global: 78, fields: [.uint16(0, count: 5)])
        builder.data(local: 2, [0xEE, 0x02, 0xEE, 0x02, 0xEE, 0x02, 0xEE, 0x02, 0xEE, 0x02])  // 5 × 750 ms
        return builder.file()
    }

    func write(_ bytes: [UInt8]) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let path = directory.file("ride.fit")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    @Test("records become heart-rate frames at their times; hrv beats ride along; device_info names the strap")
    func frames() throws {
        let (directory, path) = try write(activity())
        _ = directory
        #expect(try TraceRecording.kind(of: path) == .fit)
        let entries = Array(try FITRecording(path: path))
        let frames = entries.compactMap { entry -> SensorFrame? in
            if case .frame(let frame, _) = entry { return frame }
            return nil
        }
        #expect(frames.allSatisfy { $0.device == "fit-12345" && $0.transport == .fit })
        let reads = frames.filter { $0.kind == .read }
        #expect(reads.contains { $0.characteristic == DeviceInformationField.manufacturerName.characteristic && $0.value == Array("Garmin".utf8) })
        let notifications = frames.filter { $0.kind == .notify }
        let measurements = try notifications.map { try HeartRateMeasurement(decoding: $0.value) }
        #expect(measurements.map(\.heartRate) == [70, 71, 72, 73, 74])
        #expect(notifications.first?.time.secondsSinceEpoch == Double(Int64(start) + 631_065_600))
        // Beats end at 0.75, 1.5, 2.25, 3.0, 3.75 s after the first record.
        #expect(measurements.map(\.rrIntervals.count) == [0, 1, 1, 2, 1])
        #expect(measurements.flatMap(\.rrIntervals).allSatisfy { $0 == 768 })
    }

    @Test("device-relative times without an anchor are reported, not stored")
    func relativeTimes() throws {
        let (directory, path) = try write(activity(relative: true))
        _ = directory
        let entries = Array(try FITRecording(path: path))
        #expect(entries.count == 1)
        guard case .unusable(let reason) = entries.first else {
            Issue.record("expected an unusable entry")
            return
        }
        #expect(reason.contains("5 heart-rate records have device-relative times"))
    }

    @Test("a damaged file says what was read, and gives it up only when asked")
    func damaged() throws {
        let bytes = activity()
        let (directory, path) = try write(Array(bytes.dropLast(9)))
        _ = directory
        #expect {
            try FITRecording(path: path)
        } throws: { error in
            "\(error)".contains("heart-rate records were read before it")
        }
        let accepted = try FITRecording(path: path, acceptingDamage: true)
        #expect(accepted.damage != nil)
        #expect(Array(accepted).contains { if case .frame(let frame, _) = $0 { frame.kind == .notify } else { false } })
    }
}

@Suite("Recording files read a window at a time")
struct FileBytesTests {
    /// A ride of 5,000 records (about 30 KB: many 4 KiB windows), with an hrv message every
    /// ten records and a strap's device_info at the end.
    func longActivity() -> [UInt8] {
        var builder = FITBuilder()
        builder.define(local: 1, global: 20, fields: [.timestamp, .uint8(3)])
        builder.define(local: 2, global: 78, fields: [.uint16(0, count: 3)])
        for second in 0..<5_000 {
            builder.data(local: 1, le32(1_100_000_000 + UInt32(second)) + [UInt8(60 + second % 100)])
            if second % 10 == 9 { builder.data(local: 2, le16(3000) + le16(3400) + le16(3600)) }
        }
        builder.define(local: 0, global: 23, fields: [.uint8(0), .uint8(1), .uint32z(3)])
        builder.data(local: 0, [1, 120] + le32(777))
        return builder.file()
    }

    func frames(_ recording: some Sequence<RecordingEntry>) -> [SensorFrame] {
        recording.compactMap { if case .frame(let frame, _) = $0 { frame } else { nil } }
    }

    @Test("a FIT file many windows long gives the same frames from its path, a descriptor and memory")
    func longFIT() throws {
        let bytes = longActivity()
        #expect(bytes.count > 7 * 4096)
        let directory = try TemporaryDirectory()
        let path = directory.file("day.fit")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let inMemory = frames(try FITRecording(bytes: bytes, name: "day.fit"))
        #expect(inMemory.count == 5_001)
        #expect(inMemory.first?.device.rawValue == "fit-777")
        #expect(frames(try FITRecording(source: FileBytes.open(path: path, windowSize: 4096), name: path)) == inMemory)
        #expect(frames(try FITRecording(path: path)) == inMemory)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let fromDescriptor = try FITRecording(source: FileBytes.open(descriptor: descriptor, name: "day.fit", windowSize: 4096), name: "day.fit")
        #expect(frames(fromDescriptor) == inMemory)
        #expect(lseek(descriptor, 0, SEEK_CUR) == 0, "the caller's offset does not move")
    }

    @Test("reads across windows, past the end, and of a file cut shorter after it was opened")
    func windows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("bytes")
        let bytes = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var source = try FileBytes.open(path: path)
        #expect(source.count == bytes.count)
        #expect(Array(try source.bytes(at: 0, length: 10)) == Array(bytes[0..<10]))
        #expect(Array(try source.bytes(at: 262_140, length: 10)) == Array(bytes[262_140..<262_150]), "across a window's end")
        #expect(Array(try source.bytes(at: 5, length: 3)) == Array(bytes[5..<8]), "back before the window")
        #expect(Array(try source.bytes(at: 100_000, length: 300_000)) == Array(bytes[100_000..<400_000]), "more than a window")
        #expect(Array(try source.bytes(at: 699_995, length: 10)) == Array(bytes[699_995...]), "fewer at the end")
        #expect(try source.bytes(at: 800_000, length: 10).isEmpty)
        var copy = source
        #expect(truncate(path, 500_000) == 0)
        #expect(Array(try copy.bytes(at: 499_990, length: 100)) == Array(bytes[499_990..<500_000]), "ends where the file now ends")
        #expect(throws: RecordingError.self) { try FileBytes.open(path: directory.file("missing")) }
        #expect(throws: RecordingError.self) { try FileBytes.open(path: directory.path) }
    }
}
