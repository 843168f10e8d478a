/// The series chunk format, version 2: many (time, value) points, or many heartbeats, in one
/// compact blob. The codec is pure and knows no units: times are integer ticks of whatever the
/// caller chooses (milliseconds, microseconds, 1/1024 s), values plain doubles.
///
/// Version 2 adds the grid time predictor; its predictor field is 2 bits. Version 1 (written
/// by hrmd before, and still read) is the same but for that field: 1 bit, the two delta
/// predictors only. Encoders write version 2. Version 2 also brings waveform chunks (kind
/// `W`): regularly sampled integers without times, laid out in `WaveformFormat`.
///
/// ## Layout
///
/// Two bytes, then one bit stream (most significant bit first, the last byte padded with zero
/// bits). *uvarint* is LEB128 (8-bit groups: 7 value bits, the top bit set when another group
/// follows), *zvarint* a zigzag-mapped signed one (0, −1, 1, −2 … → 0, 1, 2, 3 …).
///
/// | field | size | meaning |
/// | --- | --- | --- |
/// | version | 1 byte | 2 (or 1) |
/// | kind | 1 byte | `Q` (0x51) quantity series, `H` (0x48) heartbeat series (`W`, 0x57, a waveform: `WaveformFormat`) |
/// | count | uvarint | points (or beats) in the chunk |
/// | *the rest only when count ≥ 1* | | |
/// | quantity: value mode | 1 bit | 0 scaled integers, 1 XOR of doubles |
/// | heartbeat: gap mode | 1 bit | 0 gap list, 1 one flag bit per beat |
/// | heartbeat, gap list: count, indices | uvarints | gaps; the first beat index, then each index less the previous one less 1 |
/// | heartbeat, flag per beat: first flag | 1 bit | the flag of beat 0 |
/// | first time (first offset) | zvarint | ticks |
/// | quantity, scaled: scale, first integer | uvarint, zvarint | value = integer ÷ scale |
/// | quantity, XOR: first value | 64 bits | the double's bits |
/// | *the rest only when count ≥ 2* | | |
/// | time predictor | 2 bits (version 1: 1 bit) | 0 previous delta (delta of delta), 1 reference delta, 2 grid |
/// | reference delta | zvarint | the chunk's median delta, in ticks; for the grid its period, > 0 |
/// | grid: phase | zvarint | how far the first time lies past its grid point |
/// | time residual code | 2 + 7·n bits | n − 1, then n bucket widths (see below) |
/// | quantity, scaled: value residual code | 2 + 7·n bits | the same, for value deltas |
/// | points 1 … count−1 | bits | each: its gap flag (heartbeat, flag per beat), its time residual, its value (quantity) |
///
/// **Times.** Each time is predicted and the residual (time less prediction, wrapping in 64
/// bits, so any `Int64` times — equal, backwards, days apart, `Int64.min` after `Int64.max` —
/// round-trip) zigzag-mapped and written in the time residual code. The delta predictors
/// predict each delta (time less the previous time): *previous delta* by the one before (the
/// first by the reference delta), Gorilla's delta of delta, best for steadily drifting rates
/// such as beat offsets; *reference delta* by the chunk's median delta. *Grid* predicts each
/// time one period after the grid point of the time before it: the grid is the times a
/// period apart that pass `first − phase`, and after each time it moves to the grid time
/// nearest that time (a residual's offset from the nearest multiple of the period, halves
/// toward zero, is taken off the time), so it follows lost points and a drifting clock. For
/// clocked arrivals with independent jitter the grid's residual is the jitter of one arrival,
/// the reference delta's the difference of two, and delta of delta's of three: for ±30 ms of
/// jitter the grid saves about 0.85 bits per point over the reference delta, which saves as
/// much over delta of delta. The encoder fits the grid (a least-squares line through the
/// times against their indices, counted in median deltas), measures all three, header
/// fields included, and keeps the smallest.
///
/// **Residual codes.** 1 to 4 buckets of strictly increasing widths (0…64 bits) with the
/// truncated-unary prefixes `0`, `10`, `110`, `111` (`0`, `1` for two buckets, none for
/// one); a residual goes in the first bucket wide enough. The encoder picks the widths per
/// chunk from the residuals' bit lengths (a small dynamic programme), so the same format suits
/// millisecond and microsecond ticks. A time code spends at least one bit per point, so a
/// chunk of n bytes holds at most 8n + 1 points and a corrupt count is caught at once.
///
/// | 1024-point chunk | predictor | time code widths (bits) |
/// | --- | --- | --- |
/// | 1 Hz, ±30 ms jitter, ms ticks | grid | 5, 6, 11 |
/// | 1 Hz, ±30 ms jitter, µs ticks | grid | 15, 16, 21 |
/// | 4 Hz, ±30 ms jitter, ms ticks | grid | 5, 6, 10 |
/// | RR intervals, 1/1024 s ticks | previous delta | 5, 6, 8, 13 |
///
/// **Values, scaled integers.** When every value times one scale of 1, 2, 4, 8, 10, 16, 32,
/// 64, 100, 128, 256, 512, 1000 or 1024 (the smallest that works) is an integer of at most
/// 2⁵³ whose quotient by the scale gives back the very same double (whole bpm; RR intervals in
/// 1/1024 s; milliseconds as seconds; one decimal), the values are those integers: each
/// later one as the zigzag-mapped difference from the one before, in the value residual code.
/// Decoding divides by the scale (multiplies by its exact reciprocal when a power of two).
///
/// **Values, XOR.** Otherwise (and whenever it is smaller) the doubles' bits, each XORed with
/// the previous: `0` when equal; `10` and the XOR's bits inside the current window (leading
/// and trailing zero counts, initially 0 and 0) when they fit; `11`, 6 bits of leading zeros,
/// 6 bits of meaningful length less one, and the meaningful bits, which open a new window. The
/// encoder opens a new window when that is shorter even if the old one fits. NaN payloads,
/// ±∞, −0 and subnormals round-trip bit for bit.
///
/// **Heartbeats.** A heartbeat series is the tick column alone (offsets from the series start,
/// usually in 1/1024 s, the sums of RR intervals: delta of delta is then the change of RR
/// interval) plus HealthKit's "preceded by gap" flags, as a sparse list of beat indices or one
/// bit per beat, whichever is smaller (a chunk without gaps spends one byte on its empty list).
///
/// ## Appending
///
/// The value mode, scale, predictor and code widths are chosen for the whole chunk, and the
/// count leads it; but the count is whole bytes and the points come last, so a chunk grows by
/// writing the count anew and the new points' bits after the others, in the codes already
/// chosen, as long as those hold them (a residual no wider than the widest bucket, a value
/// the scale represents, no new gap in a gap list). Encoders keep their points: `encoded()`
/// chooses the codes for all of them and writes the chunk anew (some 40 µs for a thousand
/// points); `encodedAppending()` carries the chunk it wrote last on that way, choosing anew
/// only when the new points do not fit or have doubled the count. To extend a stored chunk,
/// `init(resuming:)` decodes it back into an encoder, which costs about as much as reading it.
public enum SeriesFormat {
    /// The format version this code writes.
    public static let version: UInt8 = 2
    /// The versions this code reads.
    public static let readableVersions: ClosedRange<UInt8> = 1...2

    /// What a chunk holds.
    public enum Kind: UInt8, Sendable {
        /// (time, value) points: `QuantitySeriesEncoder`, `QuantitySeriesReader`.
        case quantity = 0x51  // "Q"
        /// Beat offsets with gap flags: `HeartbeatSeriesEncoder`, `HeartbeatSeriesReader`.
        case heartbeat = 0x48  // "H"
        /// Regularly sampled integers of 1 to 8 channels: `WaveformEncoder`, `WaveformReader`
        /// (`WaveformFormat`).
        case waveform = 0x57  // "W"
    }

    /// The largest value scale a chunk may declare.
    public static let maximumScale: UInt64 = 1 << 32

    /// A writer positioned after the version and kind bytes.
    static func writer(for kind: Kind, capacity: Int) -> BitWriter {
        BitWriter(prefix: [version, kind.rawValue], capacity: capacity)
    }

    /// A whole chunk: the version and kind bytes, the count, and `body`, the bits after it
    /// (the count is whole bytes, so the body starts on a byte).
    static func chunk(of kind: Kind, count: Int, body: BitWriter) -> [UInt8] {
        var writer = BitWriter(prefix: [version, kind.rawValue], capacity: 12 + body.bitCount / 8 + 1)
        writer.writeVarint(UInt64(count))
        return writer.finished() + body.finished()
    }

    /// Checks the version and kind bytes and reads the point count; the reader is left just
    /// after it. Each point after the first costs at least one bit, so a count the bytes
    /// cannot hold means they were cut short.
    static func readPrologue(_ bytes: [UInt8], kind: Kind) throws(SeriesCodingError) -> (reader: BitReader, count: Int, version: UInt8) {
        guard bytes.count >= 2 else { throw .truncated(atBit: 8 * bytes.count) }
        guard readableVersions.contains(bytes[0]) else { throw .unknownVersion(bytes[0]) }
        guard bytes[1] == kind.rawValue else { throw .wrongKind(found: bytes[1], expected: kind.rawValue) }
        var reader = BitReader(bytes, fromByte: 2)
        guard let count = Int(exactly: try reader.readVarint()) else { throw .corruptHeader(.count) }
        guard count <= reader.remainingBits + 1 else { throw .truncated(atBit: 8 * bytes.count) }
        return (reader, count, bytes[0])
    }

    /// Every point a reader's `next` hands out, in an array reserved for the `count` it
    /// declares.
    static func collect<Point>(count: Int, _ next: () throws(SeriesCodingError) -> Point?) throws(SeriesCodingError) -> [Point] {
        var points: [Point] = []
        points.reserveCapacity(count)
        while let point = try next() { points.append(point) }
        return points
    }
}

/// How far a reader is through its chunk. Past the last point it checks, once, that nothing
/// but the zero padding of the last byte is left.
struct ChunkProgress: Sendable {
    /// The points the chunk declares.
    let count: Int
    /// The points handed out so far.
    var handedOut = 0
    private var endChecked = false

    init(count: Int) { self.count = count }

    /// Whether a point is left to read.
    mutating func hasPoint(in reader: inout BitReader) throws(SeriesCodingError) -> Bool {
        guard handedOut == count else { return true }
        if !endChecked {
            try reader.expectEnd(declaredCount: count)
            endChecked = true
        }
        return false
    }
}
