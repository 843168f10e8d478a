/// Why bytes could not be decoded as a series chunk. Bit positions count from the first bit of
/// the chunk (byte 0, most significant bit first). Each description is one line.
public enum SeriesCodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The chunk was written in a format version this decoder does not know.
    case unknownVersion(UInt8)
    /// The chunk holds another kind of series (a heartbeat series given to the quantity
    /// decoder, say). Kinds are the bytes of `SeriesFormat.Kind`.
    case wrongKind(found: UInt8, expected: UInt8)
    /// The bytes end at `atBit` inside the header or a point the header announces.
    case truncated(atBit: Int)
    /// A header field holds a value no encoder writes.
    case corruptHeader(SeriesHeaderField)
    /// The bits of point `index` (counting from 0) describe no value: a floating-point
    /// difference whose window reaches past 64 bits.
    case corruptPoint(index: Int)
    /// Waveform sample `instant` of `channel` (both counting from 0) decodes to no `Int32`:
    /// its prediction and residual add up beyond the range, or its residual beyond 64 bits.
    case corruptSample(channel: Int, instant: Int)
    /// The bytes go on after the `declared` number of points (more than the zero padding of
    /// the last byte), so the count and the data disagree.
    case countMismatch(declared: Int)

    public var description: String {
        switch self {
        case .unknownVersion(let version):
            "series chunk has format version \(version), which this decoder does not know"
        case .wrongKind(let found, let expected):
            "series chunk is of kind \(Self.kindName(found)), not \(Self.kindName(expected))"
        case .truncated(let bit):
            "series chunk is truncated: its bytes end at bit \(bit), inside the header or a point"
        case .corruptHeader(let field):
            "series chunk header is corrupt: \(field)"
        case .corruptPoint(let index):
            "series chunk is corrupt at point \(index): its value bits reach past 64 bits"
        case .corruptSample(let channel, let instant):
            "waveform chunk is corrupt at sample \(instant) of channel \(channel): it decodes to no 32-bit integer"
        case .countMismatch(let declared):
            "series chunk declares \(declared) points but its bytes go on after them"
        }
    }

    private static func kindName(_ kind: UInt8) -> String {
        switch kind {
        case SeriesFormat.Kind.quantity.rawValue: "quantity series"
        case SeriesFormat.Kind.heartbeat.rawValue: "heartbeat series"
        case SeriesFormat.Kind.waveform.rawValue: "waveform"
        default: "0x" + String(kind, radix: 16, uppercase: true)
        }
    }
}

/// The header field found corrupt.
public enum SeriesHeaderField: Hashable, Sendable, CustomStringConvertible {
    /// A variable-length integer runs past 64 bits.
    case overlongVarint
    /// The point count does not fit in an `Int`.
    case count
    /// The scale of scaled-integer values is 0 or beyond `SeriesFormat.maximumScale`.
    case scale(UInt64)
    /// A residual code's bucket widths are not strictly increasing within 0...64, or a tick
    /// code spends no bits per point.
    case residualCode
    /// The gap list names a beat beyond the beats of the chunk.
    case gapList
    /// The time predictor is none the format defines.
    case timePredictor(UInt64)
    /// A grid's period is not positive.
    case gridPeriod(Int64)
    /// A waveform channel's predictor order is none the format defines (fixed 0...4, linear
    /// 1...12), or exceeds the chunk's instants.
    case predictorOrder(UInt64)
    /// A waveform partition's Rice selector steps outside 0...31.
    case riceSelector

    public var description: String {
        switch self {
        case .overlongVarint: "a variable-length integer runs past 64 bits"
        case .count: "the point count does not fit in an Int"
        case .scale(let scale): "value scale \(scale) is out of range"
        case .residualCode: "a residual code's bucket widths are not strictly increasing within 0...64"
        case .gapList: "the gap list names a beat beyond the beats of the chunk"
        case .timePredictor(let predictor): "time predictor \(predictor) is none the format defines"
        case .gridPeriod(let period): "the time grid's period \(period) is not positive"
        case .predictorOrder(let order): "a waveform channel's predictor order \(order) is none the format defines for its instants"
        case .riceSelector: "a waveform partition's Rice parameter steps outside 0...31"
        }
    }
}
