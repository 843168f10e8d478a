/// A FIT base type, as a field definition's third byte names it: the size of one element and
/// the raw value meaning "no value". Only the integer types are read; strings, floats and
/// `byte` arrays hold nothing this module needs.
struct FITBaseType: Equatable, Sendable {
    /// Bytes per element (1 for the types that are not read).
    let size: Int
    /// Whether elements are read at all (the integer types).
    let isInteger: Bool
    /// Whether elements are two's-complement signed.
    let isSigned: Bool
    /// The raw bits of the invalid value.
    let invalid: UInt64

    /// The base type whose number is in bits 0–4 of `code` (bit 7 only says whether it has
    /// a byte order); unknown numbers are read as nothing.
    init(code: UInt8) {
        switch code & 0x1F {
        case 0x00: self.init(size: 1, signed: false, invalid: 0xFF)  // enum
        case 0x01: self.init(size: 1, signed: true, invalid: 0x7F)  // sint8
        case 0x02: self.init(size: 1, signed: false, invalid: 0xFF)  // uint8
        case 0x03: self.init(size: 2, signed: true, invalid: 0x7FFF)  // sint16
        case 0x04: self.init(size: 2, signed: false, invalid: 0xFFFF)  // uint16
        case 0x05: self.init(size: 4, signed: true, invalid: 0x7FFF_FFFF)  // sint32
        case 0x06: self.init(size: 4, signed: false, invalid: 0xFFFF_FFFF)  // uint32
        case 0x0A: self.init(size: 1, signed: false, invalid: 0)  // uint8z
        case 0x0B: self.init(size: 2, signed: false, invalid: 0)  // uint16z
        case 0x0C: self.init(size: 4, signed: false, invalid: 0)  // uint32z
        case 0x0E: self.init(size: 8, signed: true, invalid: 0x7FFF_FFFF_FFFF_FFFF)  // sint64
        case 0x0F: self.init(size: 8, signed: false, invalid: 0xFFFF_FFFF_FFFF_FFFF)  // uint64
        case 0x10: self.init(size: 8, signed: false, invalid: 0)  // uint64z
        default:  // string (0x07), float32 (0x08), float64 (0x09), byte (0x0D), unknown
            self.init(size: 1, signed: false, invalid: 0, integer: false)
        }
    }

    private init(size: Int, signed: Bool, invalid: UInt64, integer: Bool = true) {
        self.size = size
        self.isInteger = integer
        self.isSigned = signed
        self.invalid = invalid
    }

    /// The valid elements of a field's bytes, in order: one for a plain field, several for
    /// an array. A size that is not a whole number of elements reads as nothing (as the SDK
    /// falls back to bytes), and so does a uint64 element beyond `Int64.max`.
    func elements(of bytes: ArraySlice<UInt8>, bigEndian: Bool) -> [Int64] {
        guard isInteger, !bytes.isEmpty, bytes.count % size == 0 else { return [] }
        var elements: [Int64] = []
        elements.reserveCapacity(bytes.count / size)
        var start = bytes.startIndex
        while start < bytes.endIndex {
            if let element = element(of: bytes[start..<start + size], bigEndian: bigEndian) {
                elements.append(element)
            }
            start += size
        }
        return elements
    }

    /// One element's value; nil when it is the invalid value.
    private func element(of bytes: ArraySlice<UInt8>, bigEndian: Bool) -> Int64? {
        var bits: UInt64 = 0
        for (position, byte) in bytes.enumerated() {
            let shift = bigEndian ? (size - 1 - position) * 8 : position * 8
            bits |= UInt64(byte) << UInt64(shift)
        }
        guard bits != invalid else { return nil }
        guard isSigned else { return Int64(exactly: bits) }
        let unused = UInt64(64 - size * 8)
        return Int64(bitPattern: bits << unused) >> Int64(unused)  // sign-extended
    }
}
