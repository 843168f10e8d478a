import HealthUnits

/// The error parsing `text` throws, or `nil` if it parses.
func parseError(_ text: String) -> UnitError? {
    do {
        _ = try HealthUnit(from: text)
        return nil
    } catch {
        return error
    }
}

/// Whether two doubles agree to a relative tolerance (exact for zero).
func isClose(_ actual: Double, _ expected: Double, tolerance: Double = 1e-12) -> Bool {
    if actual == expected { return true }
    return (actual - expected).magnitude <= tolerance * max(actual.magnitude, expected.magnitude)
}
