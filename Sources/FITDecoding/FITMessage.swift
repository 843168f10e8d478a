/// What a definition message says about the data messages of one local message type.
struct FITDefinition: Sendable {
    /// One field of the data messages: where it sits and how to read it.
    struct Field: Sendable {
        var number: UInt8
        var baseType: FITBaseType
        /// Byte range within the data message's content (the bytes after its header).
        var range: Range<Int>
    }

    var globalMessage: UInt16
    var bigEndian: Bool
    var fields: [Field]
    /// Bytes of a data message's content: its fields, then its developer fields.
    var contentSize: Int
}

/// One data message: its definition and its content. Field values are read from the bytes
/// when asked for.
struct FITMessage: Sendable {
    let definition: FITDefinition
    /// The message's content (the bytes after its one-byte header): its fields, then its
    /// developer fields.
    let content: ArraySlice<UInt8>
    /// The message's time: its timestamp field (253), or its compressed-timestamp header's.
    var timestamp: UInt32?

    var globalMessage: UInt16 { definition.globalMessage }

    /// The valid elements of field `number`, in order; empty when the message lacks it or
    /// holds only invalid values. (The first definition of a field number counts.)
    func values(_ number: UInt8) -> [Int64] {
        guard let field = definition.fields.first(where: { $0.number == number }) else { return [] }
        let bytes = content[content.startIndex + field.range.lowerBound..<content.startIndex + field.range.upperBound]
        return field.baseType.elements(of: bytes, bigEndian: definition.bigEndian)
    }

    /// The first valid element of field `number`, as `T` when it fits in one.
    func value<T: FixedWidthInteger>(_ number: UInt8, as _: T.Type = T.self) -> T? {
        values(number).first.flatMap { T(exactly: $0) }
    }
}
