/// What the Sensor Contact bits (1–2) of a Heart Rate Measurement's flags say.
///
/// The raw values are the strings used in JSON output.
public enum SensorContact: String, Sendable, Hashable, CaseIterable {
    /// The sensor does not support contact detection (bits `0b00` or `0b01`).
    case unsupported
    /// Contact detection is supported but the sensor is not touching skin (bits `0b10`).
    case notDetected
    /// Contact detection is supported and contact is detected (bits `0b11`).
    case detected

    /// The contact state spelled by bits 1–2 of a Heart Rate Measurement flags byte
    /// (bit 1 = detected, bit 2 = supported); the other bits are ignored.
    public init(flags: UInt8) {
        switch (flags >> 1) & 0b11 {
        case 0b11: self = .detected
        case 0b10: self = .notDetected
        default: self = .unsupported  // 0b00, and 0b01 ("detected" without "supported")
        }
    }

    /// Bits 1–2 of a flags byte for this state: `0b000`, `0b100` or `0b110`.
    public var flagBits: UInt8 {
        switch self {
        case .unsupported: return 0b000
        case .notDetected: return 0b100
        case .detected: return 0b110
        }
    }
}

/// How the Heart Rate Measurement Value is written: flags bit 0.
public enum HeartRateValueFormat: Sendable, Hashable {
    /// One byte (flags bit 0 clear): 0–255 beats per minute.
    case uint8
    /// Two bytes, little-endian (flags bit 0 set).
    case uint16
}

/// One decoded Heart Rate Measurement (GATT characteristic 0x2A37).
///
/// The value is byte 0, the flags, then the fields the flags announce, in this order:
///
/// | flags bit | field | encoding |
/// |---|---|---|
/// | 0 | Heart Rate Measurement Value | clear: uint8; set: uint16 little-endian |
/// | 1–2 | (no field) Sensor Contact status | see ``SensorContact`` |
/// | 3 | Energy Expended | uint16 LE, kilojoules, cumulative |
/// | 4 | RR-Interval | one or more uint16 LE, 1/1024 s, oldest first, to the end of the value |
/// | 5–7 | reserved | ignored |
///
/// ## Malformed values
/// ``init(decoding:)`` checks the remaining length before every field, in field order, the way
/// BlueZ's `profiles/heartrate/heartrate.c` (`process_measurement`) does, and throws at the
/// first defect:
///
/// - no byte at all → ``GATTDecodingError/empty``;
/// - too few bytes for the heart rate (1 or 2) →
///   ``GATTDecodingError/truncated(field:needed:available:)`` with field `"heart rate"`;
/// - too few bytes for the energy expended → the same with field `"energy expended"`;
/// - RR flag set but no byte left → ``GATTDecodingError/missingRRIntervals``;
/// - RR flag set and an odd number of bytes left → ``GATTDecodingError/oddRRIntervalBytes(_:)``.
///
/// Choices, after comparing the public peers (BlueZ `process_measurement`, Nordic
/// Android-BLE-Common-Library `HeartRateMeasurementDataCallback`, eisaev/blevalueparser
/// `HeartRateMeasurement`):
///
/// - **No length cap.** Any number of RR-Intervals is accepted; a strap on a connection with
///   a larger ATT MTU may send more than fit in the default 20-byte notification. BlueZ and
///   Nordic agree; blevalueparser rejects values over 20 bytes and stops after 9 (uint8 heart
///   rate), 8 or 7 intervals.
/// - **Odd RR byte → error**, as in BlueZ and blevalueparser: a stray byte means the frame is
///   not what its flags claim, and every interval in it is suspect. Nordic instead drops the
///   last byte and keeps the intervals before it.
/// - **RR flag with no interval → error**, as in BlueZ and Nordic (the field is "one or more"
///   intervals); blevalueparser accepts it as an empty list.
/// - **Bytes after the last announced field, when the RR flag is clear, are ignored**, as all
///   three peers do: the reserved flag bits are ignored too, and a later revision of the
///   specification could use them to announce a field there. (With the RR flag set there is no
///   "after": the intervals run to the end of the value.)
/// - **Contact bits `0b01`** (detected but not supported) decode as ``SensorContact/unsupported``,
///   as Nordic does; the specification lists `0b01` as "not supported".
/// - Plausibility is not judged here: a heart rate of 0 or of 1000, or an RR-interval of 0,
///   decodes as sent; the ingest policy decides what to store.
public struct HeartRateMeasurement: Hashable, Sendable {
    /// Beats per minute.
    public var heartRate: UInt16
    /// The sensor contact state from flags bits 1–2.
    public var sensorContact: SensorContact
    /// Energy expended in kilojoules, cumulative since the sensor's counter was last reset;
    /// `nil` when the value does not carry the field.
    public var energyExpended: UInt16?
    /// RR-Intervals as sent, in units of 1/1024 second, oldest first; empty when none were sent.
    public var rrIntervals: [UInt16]

    /// The RR-Intervals in seconds (raw / 1024), oldest first.
    public var rrIntervalSeconds: [Double] { rrIntervals.map { Double($0) / 1024 } }

    /// A measurement from its parts.
    ///
    /// - Parameters:
    ///   - heartRate: beats per minute.
    ///   - sensorContact: the contact state.
    ///   - energyExpended: cumulative kilojoules, or `nil` for none.
    ///   - rrIntervals: raw RR-Intervals in 1/1024 s, oldest first.
    public init(
        heartRate: UInt16, sensorContact: SensorContact = .unsupported, energyExpended: UInt16? = nil,
        rrIntervals: [UInt16] = []
    ) {
        self.heartRate = heartRate
        self.sensorContact = sensorContact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
    }

    /// Decodes one raw Heart Rate Measurement value (a notification of characteristic 0x2A37).
    ///
    /// See the type's documentation for the layout and for what counts as malformed.
    /// - Parameter bytes: the value, flags byte first.
    /// - Throws: ``GATTDecodingError/empty``, ``GATTDecodingError/truncated(field:needed:available:)``,
    ///   ``GATTDecodingError/missingRRIntervals`` or ``GATTDecodingError/oddRRIntervalBytes(_:)``.
    @inlinable
    public init(decoding bytes: some Collection<UInt8>) throws(GATTDecodingError) {
        // Decode from contiguous memory: one non-generic decoder serves every caller at full
        // speed, whichever module it is in.
        let decoded = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(GATTDecodingError) in try HeartRateMeasurement(contiguous: buffer) }
        }
        if let decoded {
            self = try decoded.get()
        } else {
            self = try Array(bytes).withUnsafeBufferPointer { buffer throws(GATTDecodingError) in
                try HeartRateMeasurement(contiguous: buffer)
            }
        }
    }

    @usableFromInline
    init(contiguous bytes: UnsafeBufferPointer<UInt8>) throws(GATTDecodingError) {
        var reader = ByteReader(bytes)
        guard reader.remaining > 0 else { throw .empty }
        let flags = try reader.uint8(field: "flags")

        let heartRate: UInt16
        if flags & Flag.uint16Value != 0 {
            heartRate = try reader.uint16(field: "heart rate")
        } else {
            heartRate = UInt16(try reader.uint8(field: "heart rate"))
        }

        var energyExpended: UInt16?
        if flags & Flag.energyExpended != 0 {
            energyExpended = try reader.uint16(field: "energy expended")
        }

        var rrIntervals: [UInt16] = []
        if flags & Flag.rrIntervals != 0 {
            let left = reader.remaining
            guard left > 0 else { throw .missingRRIntervals }
            guard left % 2 == 0 else { throw .oddRRIntervalBytes(left) }
            rrIntervals.reserveCapacity(left / 2)
            while reader.remaining > 0 {
                rrIntervals.append(try reader.uint16(field: "RR-interval"))
            }
        }
        // Without the RR flag, anything left over is ignored (see the type's documentation).

        self.init(
            heartRate: heartRate, sensorContact: SensorContact(flags: flags),
            energyExpended: energyExpended, rrIntervals: rrIntervals)
    }

    /// Encodes the measurement as a raw 0x2A37 value.
    ///
    /// The heart rate is written as uint8 when it is at most 255, unless `format` is
    /// ``HeartRateValueFormat/uint16``; a heart rate above 255 is always written as uint16
    /// (so `.uint8` is a preference, never a truncation). ``SensorContact/unsupported`` writes
    /// contact bits `00`; reserved bits are clear. Energy Expended is written when present,
    /// RR-Intervals when there is at least one, with no limit on their number.
    /// `HeartRateMeasurement(decoding: m.encoded(format: f)) == m` for every `m` and `f`.
    /// - Parameter format: force a heart-rate format, or `nil` for the smallest that fits.
    /// - Returns: the bytes, flags first.
    public func encoded(format: HeartRateValueFormat? = nil) -> [UInt8] {
        let wide = heartRate > UInt16(UInt8.max) || format == .uint16
        var flags = sensorContact.flagBits
        if wide { flags |= Flag.uint16Value }
        if energyExpended != nil { flags |= Flag.energyExpended }
        if !rrIntervals.isEmpty { flags |= Flag.rrIntervals }

        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 + (wide ? 2 : 1) + (energyExpended == nil ? 0 : 2) + 2 * rrIntervals.count)
        bytes.append(flags)
        if wide {
            bytes.appendLittleEndian(heartRate)
        } else {
            bytes.append(UInt8(truncatingIfNeeded: heartRate))
        }
        if let energyExpended { bytes.appendLittleEndian(energyExpended) }
        for interval in rrIntervals { bytes.appendLittleEndian(interval) }
        return bytes
    }

    /// Bits of the flags byte.
    private enum Flag {
        static let uint16Value: UInt8 = 1 << 0
        static let energyExpended: UInt8 = 1 << 3
        static let rrIntervals: UInt8 = 1 << 4
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }
}

/// Reads little-endian integers off the front of any byte collection, checking the length
/// left before each read.
private struct ByteReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index: Int
    /// Bytes not read yet.
    private(set) var remaining: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.remaining = bytes.count
    }

    mutating func uint8(field: String) throws(GATTDecodingError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(field: field, needed: 1, available: remaining) }
        return next()
    }

    mutating func uint16(field: String) throws(GATTDecodingError) -> UInt16 {
        guard remaining >= 2 else { throw .truncated(field: field, needed: 2, available: remaining) }
        let low = next()
        let high = next()
        return UInt16(low) | UInt16(high) << 8
    }

    private mutating func next() -> UInt8 {
        let byte = bytes[index]
        index += 1
        remaining -= 1
        return byte
    }
}
