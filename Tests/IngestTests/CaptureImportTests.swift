import BluetoothWire
import Foundation
import HealthModel
import HealthStore
import Ingest
import Recordings
import TestSupport
import Testing
import Timestamps

extension RecordingImportTests {
    func capture(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = directory.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a btsnoop capture from a descriptor: every heart rate at its time, RR intervals, the strap described; once")
    func captureFromDescriptor() throws {
        try grant()
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .rrInterval)
        let strap = StrapCapture(datalink: .uart)
        let path = try capture("on-disk.btsnoop", strap.capture())
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try withDescriptor(path) { fd in try recordings.replay(descriptor: fd, name: "btsnoop_hci.log") }
        let summary = recordings.finish()
        #expect(messages.isEmpty, "\(messages)")
        #expect(summary.badLines == 0 && summary.badRecords == 0)
        let heartRates = try store.samples(SampleQuery(type: .heartRate))
        #expect(heartRates.map(\.sample.canonicalValue) == strap.measurements.map { Double($0.heartRate) })
        #expect(heartRates.map(\.sample.start) == strap.measurements.map { Timestamp(microsecondsSinceEpoch: $0.time) })
        let first = try #require(heartRates.first?.sample)
        #expect(first.device?.localIdentifier == "C8:3F:41:0A:9B:27")
        #expect(first.device?.manufacturer == "Polar Electro Oy" && first.device?.model == "H10" && first.device?.name == StrapCapture.deviceName)
        #expect(first.metadata.sensorLocation == .chest && first.metadata.sensorContact == true)
        #expect(try store.sampleCount(of: .rrInterval) == strap.measurements.reduce(0) { $0 + $1.rrIntervals.count })

        // The same session captured by btmon (monitor datalink) stores nothing new.
        var monitor = StrapCapture(datalink: .monitor)
        monitor.enhancedConnection = true
        let again = try capture("btmon.btsnoop", monitor.capture())
        var second = importer()
        try second.replay(path: again)
        let repeated = second.finish()
        #expect(repeated.stored == 0 && repeated.unchanged == summary.stored)
    }

    @Test("a truncated capture: the bad record by number under its name, the good ones stored")
    func truncatedCapture() throws {
        try grant()
        let session = StrapCapture(datalink: .uart).build()
        let path = try capture("cut.btsnoop", Array(session.bytes.dropLast(3)))
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try recordings.replay(path: path, name: "cut.btsnoop")
        let summary = recordings.finish()
        #expect(messages == ["cut.btsnoop: record \(session.builder.recordCount): truncated: 7 bytes announced, the file ends after 4"])
        #expect(summary.badRecords == 1 && summary.badLines == 0)
        #expect(summary.description.hasSuffix("; 1 bad records"))
        #expect(try store.sampleCount(of: .heartRate) == 12)
    }

    @Test("more than 50 bad records: 50 told one by one, then how many more")
    func manyBadRecords() throws {
        var writer = BTSnoopWriter(datalink: .uart)
        for index in 0..<60 { try writer.append(.aclReceived([0x40, 0x20]), unixMicroseconds: StrapCapture.start + Int64(index)) }
        let path = try capture("bad.btsnoop", writer.bytes)
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try recordings.replay(path: path, name: "bad")
        #expect(messages.count == 52, "50 bad records, that there was no heart rate, how many more")
        #expect(messages[49].hasPrefix("bad: record 50: "))
        #expect(messages[50] == "bad: the capture holds no heart-rate measurements")
        #expect(messages[51] == "bad: 10 more bad records")
        #expect(recordings.finish().badRecords == 60)
    }

    @Test("a capture without discovery: the guess is told, not counted as bad; a named handle needs no guess")
    func captureWithoutDiscovery() throws {
        try grant()
        let strap = StrapCapture.lateStart(datalink: .uart)
        let path = try capture("late.btsnoop", strap.capture())
        var messages: [String] = []
        var guessed = importer { messages.append($0) }
        try guessed.replay(path: path, name: "late")
        let summary = guessed.finish()
        #expect(messages.count == 2 && messages.allSatisfy { $0.hasPrefix("late: ") })
        #expect(summary.badLines == 0 && summary.badRecords == 0 && summary.stored > 0)
        #expect(try store.samples(SampleQuery(type: .heartRate)).first?.sample.device?.localIdentifier == "hci-conn-0x0040")

        messages = []
        var named = importer(options: .init(capture: .init(measurementHandle: StrapCapture.heartRateHandle))) { messages.append($0) }
        try named.replay(path: path, name: "late")
        #expect(named.finish().unchanged == summary.stored)
        #expect(messages.count == 1 && messages.first?.contains("open before the capture began") == true)
    }
}
