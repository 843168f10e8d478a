/// A point in time or a duration, in whole microseconds.
///
/// Points in time count from the Unix epoch, 1970-01-01T00:00:00Z.
public typealias Microseconds = Int64

/// Durations used by the figures, in microseconds.
enum Span {
    static let second: Microseconds = 1_000_000
    static let minute: Microseconds = 60 * second
}

/// Divides rounding toward negative infinity, so that an instant before the
/// epoch falls into the window that actually contains it.
///
/// - Precondition: `divisor` is positive.
func floorDivide(_ value: Int64, by divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return value % divisor < 0 ? quotient - 1 : quotient
}

/// Adds two instants or durations, clamping to the representable range
/// instead of trapping on overflow.
func clampedSum(_ lhs: Microseconds, _ rhs: Microseconds) -> Microseconds {
    let (sum, overflow) = lhs.addingReportingOverflow(rhs)
    guard overflow else { return sum }
    return rhs > 0 ? .max : .min
}
