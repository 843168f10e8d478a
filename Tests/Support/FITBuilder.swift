import FITDecoding

/// Builds small FIT files record by record, for tests (damage included).
public struct FITBuilder {
    public init() {}

    /// A field definition: number, size in bytes, base type code.
    public struct Field: Sendable {
        public init(number: UInt8, size: UInt8, baseType: UInt8) {
            self.number = number
            self.size = size
            self.baseType = baseType
        }

        public var number: UInt8
        public var size: UInt8
        public var baseType: UInt8

        public static func uint8(_ number: UInt8) -> Field { Field(number: number, size: 1, baseType: 0x02) }
        public static func enumeration(_ number: UInt8) -> Field { Field(number: number, size: 1, baseType: 0x00) }
        public static func uint16(_ number: UInt8, count: UInt8 = 1) -> Field { Field(number: number, size: 2 * count, baseType: 0x84) }
        public static func uint16z(_ number: UInt8) -> Field { Field(number: number, size: 2, baseType: 0x8B) }
        public static func uint32(_ number: UInt8) -> Field { Field(number: number, size: 4, baseType: 0x86) }
        public static func uint32z(_ number: UInt8) -> Field { Field(number: number, size: 4, baseType: 0x8C) }
        public static let timestamp = uint32(253)
    }

    public private(set) var records: [UInt8] = []

    /// A definition message for local type `local`.
    public mutating func define(local: UInt8, global: UInt16, bigEndian: Bool = false, fields: [Field], developerFields: [Field] = []) {
        records.append(0x40 | (developerFields.isEmpty ? 0 : 0x20) | local)
        records += [0, bigEndian ? 1 : 0]
        records += bigEndian ? be16(global) : le16(global)
        records.append(UInt8(fields.count))
        for field in fields { records += [field.number, field.size, field.baseType] }
        if !developerFields.isEmpty {
            records.append(UInt8(developerFields.count))
            for field in developerFields { records += [field.number, field.size, field.baseType] }  // last: developer data index
        }
    }

    /// A data message with a normal header.
    public mutating func data(local: UInt8, _ content: [UInt8]) {
        records.append(local)
        records += content
    }

    /// A data message with a compressed-timestamp header.
    public mutating func compressed(local: UInt8, timeOffset: UInt8, _ content: [UInt8]) {
        records.append(0x80 | (local & 0x03) << 5 | (timeOffset & 0x1F))
        records += content
    }

    /// Raw bytes, for damage.
    public mutating func raw(_ bytes: [UInt8]) { records += bytes }

    /// The whole file: header (`headerSize` 12, or 14 and up with a CRC; `dataSize`
    /// defaults to the records' size), records, file CRC.
    public func file(headerSize: UInt8 = 14, headerCRC: UInt16? = nil, dataSize: UInt32? = nil) -> [UInt8] {
        var header: [UInt8] = [headerSize, 0x20, 0x3C, 0x08]  // protocol 2.0, profile 21.40
        header += le32(dataSize ?? UInt32(records.count))
        header += Array(".FIT".utf8)
        if headerSize >= 14 {
            header += le16(headerCRC ?? FITCRC.checksum(header))
            header += [UInt8](repeating: 0, count: Int(headerSize) - 14)
        }
        let body = header + records
        return body + le16(FITCRC.checksum(body))
    }
}

public func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
public func be16(_ value: UInt16) -> [UInt8] { le16(value).reversed() }
public func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
public func be32(_ value: UInt32) -> [UInt8] { le32(value).reversed() }
