import TestSupport

/// The draws the property tests make, from the shared deterministic generator, so that a
/// failing case can be replayed from its seed.
extension SplitMix64 {
    /// A value in `range`, both bounds included.
    mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int64(next() % width)
    }

    /// A value in `[0, 1)`.
    mutating func unit() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }

    /// A value in `[range.lowerBound, range.upperBound)`.
    mutating func double(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// `true` with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// One element of a non-empty array.
    mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[Int(int(in: 0...Int64(elements.count - 1)))]
    }
}
