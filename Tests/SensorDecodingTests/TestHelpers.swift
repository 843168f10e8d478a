import SensorDecoding

/// SplitMix64: a small, fast, deterministic generator, so that "random" test data is the same
/// on every run and every platform (the standard library's generator is seeded by the system).
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Decodes without throwing, so expected successes and failures compare with one `==`.
func decodeResult(_ bytes: [UInt8]) -> Result<HeartRateMeasurement, GATTDecodingError> {
    do {
        return .success(try HeartRateMeasurement(decoding: bytes))
    } catch {
        return .failure(error)
    }
}

/// `value` as two little-endian bytes, written out by hand rather than by the code under test.
func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
