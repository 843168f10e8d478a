/// Why ANT data could not be read; descriptions are one line.
public enum ANTError: Error, Sendable, Equatable, CustomStringConvertible {
    case notBroadcast(UInt8)
    case shortPayload(needed: Int, available: Int)

    public var description: String {
        switch self {
        case .notBroadcast(let id): "ANT message 0x\(String(id, radix: 16)) is not broadcast data"
        case .shortPayload(let needed, let available): "ANT broadcast data needs \(needed) bytes, has \(available)"
        }
    }
}

/// A broadcast data message (0x4E): the channel, 8 data bytes, and — with extended
/// messages — the sender's device number and type.
public struct BroadcastData: Sendable, Hashable {
    public var channel: UInt8
    public var data: [UInt8]
    public var deviceNumber: UInt16?
    public var deviceType: UInt8?
    public var transmissionType: UInt8?

    public init(_ message: ANTMessage) throws(ANTError) {
        guard message.id == ANTMessageID.broadcastData else { throw .notBroadcast(message.id) }
        guard message.payload.count >= 9 else { throw .shortPayload(needed: 9, available: message.payload.count) }
        channel = message.payload[0]
        data = Array(message.payload[1...8])
        // Flagged extended data: 0x80 then device number (LE), device type, transmission type.
        if message.payload.count >= 14, message.payload[9] & 0x80 != 0 {
            deviceNumber = UInt16(message.payload[10]) | UInt16(message.payload[11]) << 8
            deviceType = message.payload[12]
            transmissionType = message.payload[13]
        }
    }
}

/// One ANT+ heart-rate data page. Bytes 4–7 are the same on every page: the last beat's
/// time (1/1024 s), the beat count, and the computed heart rate.
public struct HeartRatePage: Sendable, Hashable {
    /// What the page-specific bytes 1–3 carry.
    public enum Detail: Sendable, Hashable {
        case none
        /// Page 1: cumulative operating time, seconds (2 s resolution).
        case operatingTime(seconds: Int)
        /// Page 2: manufacturer id and the upper 16 bits of the serial number.
        case manufacturer(id: UInt8, serialHigh: UInt16)
        /// Page 3: hardware, software and model numbers.
        case product(hardware: UInt8, software: UInt8, model: UInt8)
        /// Page 4: the previous beat's time, 1/1024 s.
        case previousBeat(UInt16)
        /// Page 7: battery level (%), when the strap reports it.
        case battery(level: UInt8?)
    }

    public var pageNumber: UInt8
    public var toggle: Bool
    public var beatTime: UInt16
    public var beatCount: UInt8
    public var heartRate: UInt8
    public var detail: Detail

    public init(data: [UInt8]) throws(ANTError) {
        guard data.count >= 8 else { throw .shortPayload(needed: 8, available: data.count) }
        pageNumber = data[0] & 0x7F
        toggle = data[0] & 0x80 != 0
        beatTime = UInt16(data[4]) | UInt16(data[5]) << 8
        beatCount = data[6]
        heartRate = data[7]
        switch pageNumber {
        case 1: detail = .operatingTime(seconds: (Int(data[1]) | Int(data[2]) << 8 | Int(data[3]) << 16) * 2)
        case 2: detail = .manufacturer(id: data[1], serialHigh: UInt16(data[2]) | UInt16(data[3]) << 8)
        case 3: detail = .product(hardware: data[1], software: data[2], model: data[3])
        case 4: detail = .previousBeat(UInt16(data[2]) | UInt16(data[3]) << 8)
        case 7: detail = .battery(level: data[1] == 0xFF ? nil : data[1])
        default: detail = .none
        }
    }
}

/// Turns successive pages of one strap into RR intervals (1/1024 s, oldest first): on a new
/// beat, page 4's previous-beat time gives the interval directly; otherwise it is the 16-bit
/// difference of the beat times (which wrap every 64 s), and only when the beat count
/// advanced by exactly one.
/// Old straps put junk in the page byte, so page-specific bytes are trusted only once the
/// toggle bit has been seen to change.
public struct HeartBeatTracker: Sendable {
    private var lastCount: UInt8?
    private var lastTime: UInt16?
    private var firstToggle: Bool?
    /// Whether the strap flips the toggle bit (so its page numbers mean something).
    public private(set) var pagesAreReliable = false

    public init() {}

    public mutating func rrIntervals(for page: HeartRatePage) -> [UInt16] {
        if let firstToggle, firstToggle != page.toggle { pagesAreReliable = true }
        if firstToggle == nil { firstToggle = page.toggle }
        defer {
            lastCount = page.beatCount
            lastTime = page.beatTime
        }
        guard let lastCount, page.beatCount != lastCount else { return [] }
        // Page 4 carries the previous beat's time itself: good even after a missed message.
        if pagesAreReliable, case .previousBeat(let previous) = page.detail {
            return [page.beatTime &- previous]
        }
        guard page.beatCount &- lastCount == 1, let lastTime else { return [] }
        return [page.beatTime &- lastTime]
    }
}
