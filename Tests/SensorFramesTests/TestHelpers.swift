import SensorFrames
import TestSupport

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
