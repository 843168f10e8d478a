/// The arithmetic mean of values added one at a time, in the order given.
struct RunningMean: Sendable {
    /// Sum of the values added so far.
    private(set) var sum: Double = 0
    /// Number of values added so far.
    private(set) var count = 0

    /// Adds one value.
    mutating func add(_ value: Double) {
        sum += value
        count += 1
    }

    /// The mean of the values added, or `nil` when none were added.
    var mean: Double? {
        count > 0 ? sum / Double(count) : nil
    }
}
