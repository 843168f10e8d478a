import TestSupport
import FITDecoding
import Testing

/// Damaged bytes of every kind: the decoder throws or reports damage, and never crashes.
@Suite("Damaged FIT files")
struct FITRobustnessTests {
    @Test("every prefix of a real file: header errors throw, the rest is partial with its records", arguments: [
        "garmin-fenix-5-bike.fit", "garmin-edge-820-bike.fit",
    ])
    func everyPrefix(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let whole = try FITDecoder.decodeActivity(bytes)
        for length in 0..<bytes.count {
            let prefix = Array(bytes.prefix(length))
            let expectedError: FITError = length < 12 ? .notAFITFile : .truncated(atOffset: length)
            #expect(throws: expectedError) { try FITDecoder.decodeActivity(prefix) }
            do {
                let partial = try FITDecoder.decodeActivityPartially(prefix)
                #expect(length >= 14, "a partial header was taken at \(length)")
                #expect(partial.damage == .truncated(atOffset: length))
                #expect(partial.records == Array(whole.records.prefix(partial.records.count)))
                #expect(partial.devices == Array(whole.devices.prefix(partial.devices.count)))
                #expect(partial.rrIntervals == Array(whole.rrIntervals.prefix(partial.rrIntervals.count)))
            } catch {
                #expect(length < 14 && error == expectedError, "prefix \(length) threw \(error)")
            }
        }
    }

    @Test("any one byte changed is caught, and decoding never crashes")
    func everyByteChanged() throws {
        let bytes = try Fixtures.bytes("garmin-edge-820-bike.fit")
        for position in bytes.indices {
            var damaged = bytes
            damaged[position] ^= position % 2 == 0 ? 0xFF : 0x01
            do {
                let partial = try FITDecoder.decodeActivityPartially(damaged)
                if partial.damage == nil { Issue.record("a change at \(position) went unnoticed") }
            } catch {
                // Only the header can make decoding throw.
                #expect(position < 14, "change at \(position) threw \(error)")
            }
        }
    }

    @Test("random records after a valid header decode to damage or to something, never a crash")
    func randomRecords() throws {
        var generator = SplitMix64(seed: 0x0F17)
        for _ in 0..<2000 {
            var builder = FITBuilder()
            let count = Int(generator.next() % 200)
            builder.raw((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
            let file = builder.file()
            _ = try FITDecoder.decodeActivityPartially(file)  // the header is valid: never throws
            let cut = Int(generator.next() % UInt64(file.count))
            _ = try? FITDecoder.decodeActivityPartially(Array(file.prefix(cut)))
        }
    }
}
