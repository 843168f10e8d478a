// libFuzzer target: the GATT values hrmd decodes from a strap (0x2A37 Heart Rate Measurement,
// 0x2A38 Body Sensor Location, Device Information strings, 0x2A19 Battery Level) and the
// serial sensors' lines. The first byte chooses the decoder; a decoded measurement must
// encode back to a value that decodes to the same measurement.
import SensorFrames

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGATT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 5 {
    case 0:
        if let measurement = try? HeartRateMeasurement(decoding: bytes) {
            let again = try? HeartRateMeasurement(decoding: measurement.encoded())
            precondition(again == measurement, "a decoded measurement does not survive encoding")
        }
    case 1: _ = try? BodySensorLocation(decoding: bytes)
    case 2: _ = DeviceInformationField.decodeString(bytes)
    case 3: _ = try? BatteryLevel.decode(bytes)
    default:
        var framer = LineFramer(maximumLength: 64)
        for line in framer.feed(bytes) { _ = try? SerialHeartRateLine(parsing: line) }
    }
    return 0
}
