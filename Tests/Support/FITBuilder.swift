import FITDecoding

/// Builds small FIT files field by field.
public struct FITBuilder {
    public init() {}

    private var records: [UInt8] = []

    /// A definition: (field number, size, base type) for a global message.
    public mutating func define(local: UInt8, global: UInt16, bigEndian: Bool = false, fields: [(UInt8, UInt8, UInt8)], developer: [(UInt8, UInt8, UInt8)] = []) {
        records.append(0x40 | (developer.isEmpty ? 0 : 0x20) | local)
        records += [0, bigEndian ? 1 : 0]
        records += bigEndian ? [UInt8(global >> 8), UInt8(global & 0xFF)] : [UInt8(global & 0xFF), UInt8(global >> 8)]
        records.append(UInt8(fields.count))
        for field in fields { records += [field.0, field.1, field.2] }
        if !developer.isEmpty {
            records.append(UInt8(developer.count))
            for field in developer { records += [field.0, field.1, field.2] }
        }
    }

    /// A data message with a normal header.
    public mutating func data(local: UInt8, _ bytes: [UInt8]) {
        records.append(local)
        records += bytes
    }

    /// A data message with a compressed-timestamp header.
    public mutating func compressed(local: UInt8, timeOffset: UInt8, _ bytes: [UInt8]) {
        records.append(0x80 | (local << 5) | (timeOffset & 0x1F))
        records += bytes
    }

    public var file: [UInt8] {
        var header: [UInt8] = [14, 0x20, 0x08, 0x08]
        let size = UInt32(records.count)
        header += [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]
        header += Array(".FIT".utf8)
        let headerCRC = FITCRC.checksum(header[...])
        header += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        let body = header + records
        let crc = FITCRC.checksum(body[...])
        return body + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }
}

public func littleEndian32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
public func bigEndian32(_ value: UInt32) -> [UInt8] { littleEndian32(value).reversed() }
