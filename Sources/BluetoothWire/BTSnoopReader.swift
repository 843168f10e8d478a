import ByteSources

/// Why bytes are not a btsnoop capture this reader can read.
public enum BTSnoopError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file does not start with `btsnoop\0`.
    case notBTSnoop
    /// The file ends inside the 16-byte header.
    case truncatedHeader(got: Int)
    case unsupportedVersion(UInt32)
    /// A datalink other than 1001, 1002 and 2001 (BCSP, H5, the BlueZ simulator…).
    case unsupportedDatalink(UInt32)
    /// The header could not be read (an I/O error, with its errno).
    case unreadable(ByteSourceError)

    public var description: String {
        switch self {
        case .notBTSnoop: "not a btsnoop capture (no btsnoop header)"
        case .truncatedHeader(let got): "the btsnoop header is truncated: \(BTSnoop.headerLength) bytes needed, \(got) present"
        case .unsupportedVersion(let version): "btsnoop version \(version) is not supported (only version 1)"
        case .unsupportedDatalink(let datalink):
            "btsnoop datalink \(datalink) is not supported (1001 HCI, 1002 HCI UART and 2001 Linux monitor are)"
        case .unreadable(let error): "the btsnoop header cannot be read: \(error)"
        }
    }
}

/// A record that could not be read, by its number (from 1).
public struct BTSnoopDamage: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Problem: Error, Hashable, Sendable {
        /// The file ends inside the record's 24-byte header.
        case truncatedHeader(got: Int)
        /// The file ends inside the record's data.
        case truncatedData(included: Int, got: Int)
        /// The included length is above the original length or above any HCI packet: the
        /// length is corrupt, so where the next record starts is unknown.
        case corruptLength(included: Int, original: Int)
        /// An H4 record with no bytes, so no packet type.
        case emptyPacket
        /// An H4 packet type that is not 1 to 5.
        case unknownPacketType(UInt8)
        /// A monitor record too short for what its opcode announces.
        case shortMonitorRecord(opcode: UInt16, needed: Int, got: Int)
        /// A time before the Unix epoch (a zeroed or damaged time field).
        case timeBeforeUnixEpoch(captureTime: Int64)
        /// The capture could not be read on (an I/O error, with its errno).
        case unreadable(ByteSourceError)
    }

    public var record: Int
    public var problem: Problem

    public init(record: Int, problem: Problem) {
        self.record = record
        self.problem = problem
    }

    /// Whether no record after this one can be read.
    public var endsCapture: Bool {
        switch problem {
        case .truncatedHeader, .truncatedData, .corruptLength, .unreadable: true
        case .emptyPacket, .unknownPacketType, .shortMonitorRecord, .timeBeforeUnixEpoch: false
        }
    }

    /// `record 3: truncated: …`.
    public var description: String { "record \(record): \(problem)" }
}

extension BTSnoopDamage.Problem: CustomStringConvertible {
    public var description: String {
        switch self {
        case .truncatedHeader(let got): "truncated: the file ends \(got) bytes into its \(BTSnoop.recordHeaderLength)-byte header"
        case .truncatedData(let included, let got): "truncated: \(included) bytes announced, the file ends after \(got)"
        case .corruptLength(let included, let original):
            "corrupt length: \(included) bytes included of \(original) (at most \(BTSnoop.maximumPacketLength), and never more "
                + "than the original); the records after it cannot be found"
        case .emptyPacket: "empty: no H4 packet type"
        case .unknownPacketType(let type): "unknown H4 packet type 0x\(String(type, radix: 16))"
        case .shortMonitorRecord(let opcode, let needed, let got):
            "too short for monitor opcode \(opcode): \(needed) bytes needed, \(got) present"
        case .timeBeforeUnixEpoch(let time): "a time before 1970 (\(time) µs since year 0)"
        case .unreadable(let error): "cannot be read: \(error)"
        }
    }
}

/// What reading one record gave.
public enum BTSnoopItem: Hashable, Sendable {
    case record(BTSnoopRecord)
    case damaged(BTSnoopDamage)
}

/// Reads the records of a btsnoop capture front to back, in order, normalising the three
/// datalinks into `BTSnoopPacket`s with Unix times. A damaged record is reported with its
/// number; reading goes on after damage confined to one record and ends after damage that
/// hides where the next record starts (a truncated record or a corrupt length). The capture
/// comes from a byte source: in memory, or a window onto a file of any size.
public struct BTSnoopReader: Sequence, IteratorProtocol {
    public let datalink: BTSnoopDatalink
    private var source: ByteSource
    /// Bytes of the capture read so far.
    public private(set) var offset = BTSnoop.headerLength
    private var number = 0
    private var ended = false

    /// Checks the header of the capture held in `bytes`.
    public init(_ bytes: [UInt8]) throws(BTSnoopError) {
        try self.init(ByteSource(bytes))
    }

    /// Checks the header of `source`.
    public init(_ source: ByteSource) throws(BTSnoopError) {
        var source = source
        let header: ArraySlice<UInt8>
        do {
            header = try source.bytes(at: 0, length: BTSnoop.headerLength)
        } catch {
            throw .unreadable(error)
        }
        guard header.count >= BTSnoop.magic.count, header.starts(with: BTSnoop.magic) else {
            throw header.count < BTSnoop.magic.count && BTSnoop.magic.starts(with: header) ? .truncatedHeader(got: header.count) : .notBTSnoop
        }
        guard header.count >= BTSnoop.headerLength else { throw .truncatedHeader(got: header.count) }
        let version = header.bigEndianUInt32(at: header.startIndex + 8)
        guard version == BTSnoop.version else { throw .unsupportedVersion(version) }
        let datalinkCode = header.bigEndianUInt32(at: header.startIndex + 12)
        guard let datalink = BTSnoopDatalink(rawValue: datalinkCode) else { throw .unsupportedDatalink(datalinkCode) }
        self.datalink = datalink
        self.source = source
    }

    public mutating func next() -> BTSnoopItem? {
        guard !ended, offset < source.count else { return nil }
        number += 1
        do {
            return try readRecord()
        } catch {
            return end(.unreadable(error))
        }
    }

    private mutating func readRecord() throws(ByteSourceError) -> BTSnoopItem {
        let header = try source.bytes(at: offset, length: BTSnoop.recordHeaderLength)
        guard header.count == BTSnoop.recordHeaderLength else { return end(.truncatedHeader(got: header.count)) }
        let base = header.startIndex
        let original = Int(header.bigEndianUInt32(at: base))
        let included = Int(header.bigEndianUInt32(at: base + 4))
        let flags = header.bigEndianUInt32(at: base + 8)
        let drops = header.bigEndianUInt32(at: base + 12)
        let captureTime = Int64(bitPattern: header.bigEndianUInt64(at: base + 16))
        guard included <= original, included <= BTSnoop.maximumPacketLength else {
            return end(.corruptLength(included: included, original: original))
        }
        let start = offset + BTSnoop.recordHeaderLength
        let data = try source.bytes(at: start, length: included)
        guard data.count == included else { return end(.truncatedData(included: included, got: data.count)) }
        offset = start + included
        guard captureTime >= BTSnoop.unixEpoch else { return .damaged(BTSnoopDamage(record: number, problem: .timeBeforeUnixEpoch(captureTime: captureTime))) }
        let packet: (controller: UInt16?, BTSnoopPacket)
        do throws(BTSnoopDamage.Problem) {
            packet = try normalise(data, flags: flags)
        } catch {
            return .damaged(BTSnoopDamage(record: number, problem: error))
        }
        return .record(BTSnoopRecord(
            number: number, unixMicroseconds: BTSnoop.unixMicroseconds(captureTime: captureTime), controller: packet.controller,
            packet: packet.1, bytesLeftOut: original - included, cumulativeDrops: drops))
    }

    private mutating func end(_ problem: BTSnoopDamage.Problem) -> BTSnoopItem {
        ended = true
        offset = source.count
        return .damaged(BTSnoopDamage(record: number, problem: problem))
    }

    private func normalise(_ data: ArraySlice<UInt8>, flags: UInt32) throws(BTSnoopDamage.Problem) -> (UInt16?, BTSnoopPacket) {
        let received = flags & 1 != 0
        switch datalink {
        case .hci:
            let opcode = flags & 2 != 0
                ? (received ? MonitorOpcode.event : MonitorOpcode.command)
                : (received ? MonitorOpcode.aclReceived : MonitorOpcode.aclSent)
            return (nil, try Self.packet(opcode: opcode, data))
        case .uart:
            guard let type = data.first else { throw .emptyPacket }
            let opcode: UInt16
            switch type {
            case 1: opcode = MonitorOpcode.command
            case 2: opcode = received ? MonitorOpcode.aclReceived : MonitorOpcode.aclSent
            case 3: opcode = received ? MonitorOpcode.scoReceived : MonitorOpcode.scoSent
            case 4: opcode = MonitorOpcode.event
            case 5: opcode = received ? MonitorOpcode.isoReceived : MonitorOpcode.isoSent
            default: throw .unknownPacketType(type)
            }
            return (nil, try Self.packet(opcode: opcode, data.dropFirst()))
        case .monitor:
            return (UInt16(flags >> 16), try Self.packet(opcode: UInt16(flags & 0xFFFF), data))
        }
    }

    private static func packet(opcode: UInt16, _ data: ArraySlice<UInt8>) throws(BTSnoopDamage.Problem) -> BTSnoopPacket {
        switch opcode {
        case MonitorOpcode.command: return .command(Array(data))
        case MonitorOpcode.event: return .event(Array(data))
        case MonitorOpcode.aclSent: return .aclSent(Array(data))
        case MonitorOpcode.aclReceived: return .aclReceived(Array(data))
        case MonitorOpcode.newIndex:
            // type (1), bus (1), address (6, least significant first), name (8, NUL-padded)
            guard data.count >= 16 else { throw .shortMonitorRecord(opcode: opcode, needed: 16, got: data.count) }
            let start = data.startIndex
            return .controllerAdded(
                address: BluetoothAddress(littleEndian: data[start + 2..<start + 8]), name: text(data[start + 8..<start + 16]))
        case MonitorOpcode.deleteIndex: return .controllerRemoved
        case MonitorOpcode.systemNote: return .note(text(data))
        default: return .other(opcode: opcode, Array(data))
        }
    }

    /// Text up to the first NUL.
    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}

extension BTSnoop {
    /// Whether `prefix` (the first bytes of a file) starts like a btsnoop capture.
    public static func looksLikeCapture(_ prefix: some Collection<UInt8>) -> Bool {
        prefix.starts(with: magic)
    }
}

extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// The big-endian integer at index `offset`.
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        self[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The big-endian integer at index `offset`.
    func bigEndianUInt64(at offset: Int) -> UInt64 {
        self[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func appendBigEndian(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
