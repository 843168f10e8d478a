import ByteSources

/// A FIT file header: 12 bytes, or 14 and up with a CRC of the first 12.
///
/// Bytes: header size, protocol version, profile version (u16 LE), data size (u32 LE),
/// ".FIT", then (size 14 and up) the header CRC (u16 LE, 0 when not computed).
public struct FITFileHeader: Sendable, Equatable {
    /// The header's size in bytes; the data section starts right after it.
    public var size: Int
    /// Protocol version: major in the high nibble, minor in the low one.
    public var protocolVersion: UInt8
    /// Profile version × 100 (2105 is 21.05).
    public var profileVersion: UInt16
    /// Bytes of records between the header and the file CRC.
    public var dataSize: UInt32
    /// The header CRC, when the header has one that is not 0 (and so was checked).
    public var crc: UInt16?

    /// The smallest header: no CRC.
    static let minimumSize = 12

    /// Reads and checks the header that starts at `offset` in `bytes`.
    ///
    /// Throws `notAFITFile` when there is no ".FIT" header there, `truncated` when the
    /// bytes end inside it, and `headerCRCMismatch` when its CRC does not match.
    public init(_ bytes: [UInt8], at offset: Int = 0) throws(FITError) {
        var source = ByteSource(bytes)
        try self.init(from: &source, at: offset)
    }

    /// Reads and checks the header that starts at `offset` in `source`, as `init(_:at:)` does.
    init(from source: inout ByteSource, at offset: Int) throws(FITError) {
        guard offset >= 0 else { throw .notAFITFile }
        let fixed = try FITSourceRead.bytes(of: &source, at: offset, length: Self.minimumSize)
        guard fixed.count == Self.minimumSize else { throw .notAFITFile }
        let size = Int(fixed[fixed.startIndex])
        guard size >= Self.minimumSize, size != Self.minimumSize + 1, fixed.dropFirst(8).elementsEqual(".FIT".utf8) else {
            throw .notAFITFile
        }
        let header = try FITSourceRead.bytes(of: &source, at: offset, length: size)
        guard header.count == size else { throw .truncated(atOffset: source.count) }
        let base = header.startIndex
        self.size = size
        protocolVersion = header[base + 1]
        profileVersion = LittleEndian.uint16(header, at: base + 2)
        dataSize = LittleEndian.uint32(header, at: base + 4)
        crc = nil
        if size >= Self.minimumSize + 2 {
            let stored = LittleEndian.uint16(header, at: base + 12)
            if stored != 0 {
                guard stored == FITCRC.checksum(header.prefix(12)) else { throw .headerCRCMismatch }
                crc = stored
            }
        }
    }
}

/// Where one FIT file lies in its source: its header, data section and file CRC.
struct FITFileLayout {
    let start: Int
    let header: FITFileHeader

    /// The records, as the header announces them (they may run past the source's end).
    var data: Range<Int> { start + header.size..<start + header.size + Int(header.dataSize) }
    /// Just after the file CRC: where a chained file would start.
    var end: Int { data.upperBound + 2 }
}

/// Reads of a byte source, with a failed read as FIT damage.
enum FITSourceRead {
    static func bytes(of source: inout ByteSource, at offset: Int, length: Int) throws(FITError) -> ArraySlice<UInt8> {
        do {
            return try source.bytes(at: offset, length: length)
        } catch {
            throw .unreadable(error)
        }
    }
}

/// Little-endian integers, as the file header and CRC store them (offsets are the slice's
/// indices).
enum LittleEndian {
    static func uint16(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func uint32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt32 {
        UInt32(uint16(bytes, at: offset)) | UInt32(uint16(bytes, at: offset + 2)) << 16
    }
}
