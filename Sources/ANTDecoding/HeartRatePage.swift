/// One ANT+ heart-rate data page: the 8 data bytes of a strap's broadcast.
///
/// Bytes 4–7 mean the same on every page and on legacy straps: the last beat's event time
/// (1/1024 s, u16 LE, wraps every 64 s), the beat count (wraps at 256) and the computed
/// heart rate. Byte 0 is the page number (bits 0–6) and the page-change toggle (bit 7);
/// bytes 1–3 depend on the page. Legacy straps put junk in bytes 0–3, so ``detail`` is only
/// meaningful once ``PageToggleDetector`` has seen the toggle bit change; ``heartRate``,
/// ``beatTime`` and ``beatCount`` always are.
public struct HeartRatePage: Sendable, Hashable {
    /// Event-time ticks per second.
    public static let ticksPerSecond = 1024

    /// What bytes 1–3 carry, by page number.
    public enum Detail: Sendable, Hashable {
        /// Page 0 (nothing beyond bytes 4–7), page 5, or a page number this module does not read.
        case none
        /// Page 1: cumulative operating time (bytes 1–3, u24 LE, 2 s units), in seconds.
        case operatingTime(seconds: Int)
        /// Page 2: manufacturer id (byte 1) and the upper 16 bits of the serial number (bytes 2–3).
        case manufacturer(id: UInt8, serialHigh: UInt16)
        /// Page 3: hardware version, software version and model number (bytes 1, 2, 3).
        case product(hardware: UInt8, software: UInt8, model: UInt8)
        /// Page 4: the previous beat's event time (bytes 2–3), 1/1024 s.
        case previousBeat(UInt16)
        /// Page 6: features supported (byte 2) and enabled (byte 3), bit fields.
        case capabilities(supported: UInt8, enabled: UInt8)
        /// Page 7: battery level in % (byte 1; nil when 0xFF), voltage in volts (coarse
        /// byte 3 bits 0–3 plus fractional byte 2 in 1/256 V; nil when coarse is 0xF) and
        /// status (byte 3 bits 4–6).
        case battery(level: UInt8?, voltage: Double?, status: BatteryStatus)
    }

    /// Battery status, byte 3 bits 4–6 of page 7 (as openant names them).
    public enum BatteryStatus: UInt8, Sendable, Hashable {
        /// 0: not reported (reserved).
        case unknown = 0
        /// 1: new.
        case new = 1
        /// 2: good.
        case good = 2
        /// 3: ok.
        case ok = 3
        /// 4: low.
        case low = 4
        /// 5: critical.
        case critical = 5
        /// 6: charging (reserved in older profiles).
        case charging = 6
        /// 7: invalid.
        case invalid = 7
    }

    /// Byte 0 bits 0–6 (junk on legacy straps).
    public var pageNumber: UInt8
    /// Byte 0 bit 7: flips every 4 messages on current straps.
    public var toggle: Bool
    /// The last beat's event time, 1/1024 s, wrapping every 64 s.
    public var beatTime: UInt16
    /// Beats so far, wrapping at 256.
    public var beatCount: UInt8
    /// The strap's computed heart rate, beats per minute (byte 7, on every page).
    public var heartRate: UInt8
    /// Bytes 1–3 read as ``pageNumber`` says.
    public var detail: Detail

    /// Reads 8 data bytes.
    ///
    /// - Throws: ``ANTError/pageLength(_:)`` unless `data` has 8 bytes.
    public init(data: [UInt8]) throws(ANTError) {
        guard data.count == 8 else { throw .pageLength(data.count) }
        pageNumber = data[0] & 0x7F
        toggle = data[0] & 0x80 != 0
        beatTime = UInt16(data[4]) | UInt16(data[5]) << 8
        beatCount = data[6]
        heartRate = data[7]
        detail = Self.detail(page: pageNumber, data[1], data[2], data[3])
    }

    /// Reads a broadcast's data bytes.
    public init(_ broadcast: BroadcastData) throws(ANTError) {
        try self.init(data: broadcast.data)
    }

    private static func detail(page: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) -> Detail {
        let high = UInt16(b2) | UInt16(b3) << 8
        switch page {
        case 1:
            return .operatingTime(seconds: (Int(b1) | Int(b2) << 8 | Int(b3) << 16) * 2)
        case 2:
            return .manufacturer(id: b1, serialHigh: high)
        case 3:
            return .product(hardware: b1, software: b2, model: b3)
        case 4:
            return .previousBeat(high)
        case 6:
            return .capabilities(supported: b2, enabled: b3)
        case 7:
            let coarse = b3 & 0x0F
            return .battery(
                level: b1 == 0xFF ? nil : b1,
                voltage: coarse == 0x0F ? nil : Double(coarse) + Double(b2) / 256,
                status: BatteryStatus(rawValue: (b3 >> 4) & 0x07) ?? .unknown)
        default:
            return .none
        }
    }
}
