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
        guard offset >= 0, bytes.count - offset >= Self.minimumSize else { throw .notAFITFile }
        let size = Int(bytes[offset])
        let signature = bytes[offset + 8..<offset + 12]
        guard size >= Self.minimumSize, size != Self.minimumSize + 1, signature.elementsEqual(".FIT".utf8) else {
            throw .notAFITFile
        }
        guard bytes.count - offset >= size else { throw .truncated(atOffset: bytes.count) }
        self.size = size
        protocolVersion = bytes[offset + 1]
        profileVersion = LittleEndian.uint16(bytes, at: offset + 2)
        dataSize = LittleEndian.uint32(bytes, at: offset + 4)
        crc = nil
        if size >= Self.minimumSize + 2 {
            let stored = LittleEndian.uint16(bytes, at: offset + 12)
            if stored != 0 {
                guard stored == FITCRC.checksum(bytes[offset..<offset + 12]) else { throw .headerCRCMismatch }
                crc = stored
            }
        }
    }
}

/// Where one FIT file lies in the bytes: its header, data section and file CRC.
struct FITFileLayout {
    let start: Int
    let header: FITFileHeader

    /// The records, as the header announces them (they may run past the bytes' end).
    var data: Range<Int> { start + header.size..<start + header.size + Int(header.dataSize) }
    /// Just after the file CRC: where a chained file would start.
    var end: Int { data.upperBound + 2 }

    /// Checks the file CRC, a CRC of the header and data (header CRC included).
    func verifyCRC(in bytes: [UInt8]) throws(FITError) {
        guard bytes.count >= end else { throw .truncated(atOffset: bytes.count) }
        let stored = LittleEndian.uint16(bytes, at: data.upperBound)
        let computed = FITCRC.checksum(bytes[start..<data.upperBound])
        guard stored == computed else { throw .fileCRCMismatch(expected: stored, actual: computed) }
    }
}

/// The data messages of FIT bytes: one file, or several chained one after the other (as
/// some devices write an activity followed by its settings).
enum FITMessageWalk {
    /// Calls `body` with each complete data message, in order, and returns what stopped it
    /// early or made it suspect: the first damage, or nil when every file was whole with a
    /// matching CRC. Messages before the damage have been handed out (all of them, for a
    /// CRC mismatch, which is only known at the end). Throws only when the bytes do not
    /// start with a valid FIT header.
    static func walk(_ bytes: [UInt8], _ body: (FITMessage) -> Void) throws(FITError) -> FITError? {
        var layout = FITFileLayout(start: 0, header: try FITFileHeader(bytes))
        while true {
            do {
                var reader = FITMessageReader(bytes: bytes, range: layout.data)
                while let message = try reader.next() { body(message) }
                try layout.verifyCRC(in: bytes)
            } catch {
                return error
            }
            guard layout.end < bytes.count else { return nil }
            do {
                layout = FITFileLayout(start: layout.end, header: try FITFileHeader(bytes, at: layout.end))
            } catch .notAFITFile {
                return .unexpectedTrailingBytes(atOffset: layout.end)
            } catch {
                return error
            }
        }
    }
}

/// Little-endian integers, as the file header and CRC store them.
enum LittleEndian {
    static func uint16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(uint16(bytes, at: offset)) | UInt32(uint16(bytes, at: offset + 2)) << 16
    }
}
