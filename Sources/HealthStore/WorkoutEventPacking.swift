import Foundation
import HealthModel
import Timestamps

/// A workout's events as the `workout` row keeps them (column `events`): 9 bytes each, in
/// order: the type's code (pause 0, resume 1, lap 2, marker 3, segment-start 4, segment-end 5),
/// then the time in microseconds since the epoch, little-endian.
enum WorkoutEventPacking {
    static let bytesPerEvent = 9

    private static let codes: [WorkoutEventType] = [.pause, .resume, .lap, .marker, .segmentStart, .segmentEnd]

    static func bytes(of events: [WorkoutEvent]) -> Data {
        var bytes = Data(capacity: events.count * bytesPerEvent)
        for event in events {
            bytes.append(UInt8(codes.firstIndex(of: event.type) ?? 3))
            let time = UInt64(bitPattern: event.time.microsecondsSinceEpoch)
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: time >> UInt64(shift))) }
        }
        return bytes
    }

    /// The events of `bytes`; a code past the known ones reads as a marker. Throws when the
    /// length is not a whole number of events (a damaged row).
    static func events(of bytes: Data) throws -> [WorkoutEvent] {
        guard bytes.count % bytesPerEvent == 0 else {
            throw HealthStoreError.database("a workout's events are \(bytes.count) bytes, not a multiple of \(bytesPerEvent)")
        }
        let all = [UInt8](bytes)
        return stride(from: 0, to: all.count, by: bytesPerEvent).map { start in
            var time: UInt64 = 0
            for index in (1...8).reversed() { time = time << 8 | UInt64(all[start + index]) }
            let code = Int(all[start])
            return WorkoutEvent(code < codes.count ? codes[code] : .marker, at: Timestamp(microsecondsSinceEpoch: Int64(bitPattern: time)))
        }
    }
}
