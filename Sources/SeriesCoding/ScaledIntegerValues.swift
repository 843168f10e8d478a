/// Values that are integers divided by a scale: the integer of value `v` is `v × scale`, and it
/// stands for `v` only when dividing it by the scale gives back `v`'s very bits.
struct ValueScale: Sendable {
    /// The scales an encoder tries, smallest first (the smallest that works gives the smallest
    /// integers): whole numbers, binary fractions down to 1/1024 (GATT RR intervals), and
    /// decimal fractions down to 1/1000.
    static let candidates: [UInt64] = [1, 2, 4, 8, 10, 16, 32, 64, 100, 128, 256, 512, 1000, 1024]

    /// Integers beyond ±2⁵³ are not all doubles.
    static let largestInteger: Double = 0x1p53

    let scale: UInt64
    private let divisor: Double
    /// 1 / scale, exact (and then used) when the scale is a power of two.
    private let reciprocal: Double
    private let isPowerOfTwo: Bool

    /// A scale of 1 ... `SeriesFormat.maximumScale`; nil otherwise.
    init?(_ scale: UInt64) {
        guard (1...SeriesFormat.maximumScale).contains(scale) else { return nil }
        self.scale = scale
        divisor = Double(scale)
        reciprocal = 1 / divisor
        isPowerOfTwo = scale & (scale - 1) == 0
    }

    /// The value an integer stands for. Multiplying by the reciprocal of a power of two is
    /// exactly dividing by it (integers of at most 2⁵³ divided by at most 2³² stay normal).
    @inline(__always)
    func value(of integer: Int64) -> Double {
        isPowerOfTwo ? Double(integer) * reciprocal : Double(integer) / divisor
    }

    /// The integer that stands for `value` under this scale, if one does bit for bit (so never
    /// for NaN, ±∞ or −0).
    func integer(exactlyRepresenting value: Double) -> Int64? {
        let product = value * divisor
        guard product.magnitude <= Self.largestInteger, product == product.rounded(.towardZero) else { return nil }
        let integer = Int64(product)
        return self.value(of: integer).bitPattern == value.bitPattern ? integer : nil
    }
}

/// Values planned as scaled integers: the scale, the first integer, and each later one as the
/// zigzag-mapped difference from the one before, in the residual code that makes them smallest.
struct ScaledIntegerPlan {
    let scale: ValueScale
    let first: Int64
    /// nil for fewer than two values.
    let code: ResidualCode?
    /// Residual `i` belongs to value `i + 1`.
    let residuals: [UInt64]
    /// The bits the values take, header fields included.
    let bitCount: Int

    /// The plan with the smallest candidate scale that represents every value exactly; nil
    /// when none does.
    init?(_ values: [Double]) {
        for candidate in ValueScale.candidates {
            guard let scale = ValueScale(candidate) else { continue }
            var integers: [Int64] = []
            integers.reserveCapacity(values.count)
            for value in values {
                guard let integer = scale.integer(exactlyRepresenting: value) else { break }
                integers.append(integer)
            }
            if integers.count == values.count {
                self.init(integers, scale: scale)
                return
            }
        }
        return nil
    }

    private init(_ integers: [Int64], scale: ValueScale) {
        self.scale = scale
        first = integers.first ?? 0
        // |integer| ≤ 2⁵³: differences cannot overflow.
        residuals = zip(integers, integers.dropFirst()).map { ZigZag.encode($1 - $0) }
        var headerBits = BitWriter.varintBitCount(scale.scale) + BitWriter.varintBitCount(ZigZag.encode(first))
        if residuals.isEmpty {
            code = nil
            bitCount = headerBits
        } else {
            var histogram = BitLengthHistogram()
            for residual in residuals { histogram.add(residual) }
            let (code, bits) = ResidualCode.cheapest(for: histogram, spendingBits: false)
            self.code = code
            headerBits += 2 + 7 * code.bucketCount
            bitCount = headerBits + bits
        }
    }

    /// Writes the scale (a uvarint) and the first integer (a zvarint).
    func writeFirst(to writer: inout BitWriter) {
        writer.writeVarint(scale.scale)
        writer.writeSignedVarint(first)
    }

    /// Writes the residual code (nothing for a single value).
    func writeCode(to writer: inout BitWriter) {
        code?.writeTable(to: &writer)
    }

    /// Writes the value of point `index` (1 ..< count).
    func writeValue(ofPoint index: Int, to writer: inout BitWriter) {
        code?.write(residuals[index - 1], to: &writer)
    }
}

/// Carries planned scaled-integer values on past the values they were planned for: the
/// residual of each further value under the plan's scale and code, while they hold it.
struct ScaledIntegerAppender: Sendable {
    let code: ResidualCode
    private let scale: ValueScale
    private var last: Int64

    /// The state after `plan`'s values (at least two), the last of them `lastValue`.
    init(_ plan: ScaledIntegerPlan, lastValue: Double) {
        code = plan.code ?? ResidualCode.oneBit
        scale = plan.scale
        last = plan.scale.integer(exactlyRepresenting: lastValue) ?? 0
    }

    /// The zigzag-mapped residual of `value` as the next value and its integer; nil when the
    /// scale cannot represent it or the code cannot hold the residual.
    func residual(of value: Double) -> (residual: UInt64, integer: Int64)? {
        guard let integer = scale.integer(exactlyRepresenting: value) else { return nil }
        // |integer| ≤ 2⁵³: the difference cannot overflow.
        let residual = ZigZag.encode(integer - last)
        return code.holds(residual) ? (residual, integer) : nil
    }

    mutating func advance(to integer: Int64) { last = integer }
}

/// Reads back the values a `ScaledIntegerPlan` wrote.
struct ScaledIntegerReader: Sendable {
    private var integer: Int64
    private let scale: ValueScale
    private let code: ResidualCode

    /// Reads the scale and the first integer; `first` is the value they stand for.
    static func readFirst(from reader: inout BitReader) throws(SeriesCodingError) -> (scale: ValueScale, first: Int64) {
        let rawScale = try reader.readVarint()
        guard let scale = ValueScale(rawScale) else { throw .corruptHeader(.scale(rawScale)) }
        return (scale, try reader.readSignedVarint())
    }

    /// Reads the residual code of the values after the first.
    init(scale: ValueScale, first: Int64, readingCodeFrom reader: inout BitReader) throws(SeriesCodingError) {
        self.scale = scale
        integer = first
        code = try ResidualCode.readTable(from: &reader, spendingBits: false)
    }

    /// The next value. Corrupt residuals wrap rather than trap.
    @inline(__always)
    mutating func next(from reader: inout BitReader) throws(SeriesCodingError) -> Double {
        integer &+= ZigZag.decode(try code.read(from: &reader))
        return scale.value(of: integer)
    }
}
