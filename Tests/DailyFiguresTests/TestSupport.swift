/// Seeds of the pseudo-random cases every property test runs.
let propertySeeds: ClosedRange<UInt64> = 1...300

/// One second and one minute, in microseconds.
let second: Int64 = 1_000_000
let minute: Int64 = 60 * second
