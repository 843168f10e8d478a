/// Doubles written as the XOR of their bits with the previous value's, Gorilla's way: a run of
/// equal values costs a bit each, and slowly changing ones only the bits that change. The
/// "window" is the span of meaningful bits (between `leading` and `trailing` zero bits) the
/// last explicitly described XOR had; later XORs that fit in it reuse it.
struct FloatXORState: Sendable {
    /// How one value is written.
    enum Step {
        /// `0`: the same bits as the previous value.
        case same
        /// `10`: the XOR's bits within the current window.
        case inWindow
        /// `11`, leading zeros (6 bits), meaningful length less one (6 bits), the meaningful
        /// bits: a new window.
        case newWindow
    }

    private(set) var previous: UInt64
    private(set) var leading = 0
    private(set) var trailing = 0

    init(first: Double) { previous = first.bitPattern }

    var windowLength: Int { 64 - leading - trailing }

    /// Chooses how to write `value`, moves on to it, and returns the step, the XOR and the
    /// bits the step costs.
    mutating func advance(to value: Double) -> (step: Step, xor: UInt64, bits: Int) {
        let xor = value.bitPattern ^ previous
        previous = value.bitPattern
        guard xor != 0 else { return (.same, 0, 1) }
        let newLeading = xor.leadingZeroBitCount, newTrailing = xor.trailingZeroBitCount
        let fits = newLeading >= leading && newTrailing >= trailing
        let newWindowBits = 2 + 12 + (64 - newLeading - newTrailing)
        if fits, 2 + windowLength <= newWindowBits { return (.inWindow, xor, 2 + windowLength) }
        (leading, trailing) = (newLeading, newTrailing)
        return (.newWindow, xor, newWindowBits)
    }

    /// The bits values after `first` take.
    static func bitCount(of values: some Sequence<Double>, after first: Double) -> Int {
        var state = FloatXORState(first: first)
        return values.reduce(0) { $0 + state.advance(to: $1).bits }
    }
}

/// Writes doubles after the first as `FloatXORState` steps.
struct FloatXORWriter {
    private var state: FloatXORState

    init(first: Double) { state = FloatXORState(first: first) }

    mutating func write(_ value: Double, to writer: inout BitWriter) {
        let (step, xor, _) = state.advance(to: value)
        switch step {
        case .same:
            writer.write(false)
        case .inWindow:
            writer.write(0b10, width: 2)
            writer.write(xor >> UInt64(state.trailing), width: state.windowLength)
        case .newWindow:
            writer.write(0b11, width: 2)
            writer.write(UInt64(state.leading), width: 6)
            writer.write(UInt64(state.windowLength - 1), width: 6)
            writer.write(xor >> UInt64(state.trailing), width: state.windowLength)
        }
    }
}

/// Reads back the doubles a `FloatXORWriter` wrote.
struct FloatXORReader: Sendable {
    private var previous: UInt64
    private var trailing = 0
    private var windowLength = 64

    init(first: Double) { previous = first.bitPattern }

    /// The value of point `index` (for errors). A new window reaching past 64 bits is corrupt.
    @inline(__always)
    mutating func next(from reader: inout BitReader, index: Int) throws(SeriesCodingError) -> Double {
        if try reader.readBit() {
            if try reader.readBit() {
                let leading = Int(try reader.read(6))
                let length = Int(try reader.read(6)) + 1
                guard leading + length <= 64 else { throw .corruptPoint(index: index) }
                (trailing, windowLength) = (64 - leading - length, length)
            }
            previous ^= try reader.read(windowLength) << UInt64(trailing)
        }
        return Double(bitPattern: previous)
    }
}
