// libFuzzer target: a FIT file from a watch or a strap, decoded as `hrmctl replay` and
// `hrmd --sensor replay:` read it (heart-rate records, devices, damage).
import FITDecoding
import SensorBackends

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFIT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? FITDecoder.decodeActivity(bytes)
    if let recording = try? FITRecording(bytes: bytes, name: "fuzz.fit", acceptingDamage: true) {
        _ = Array(recording).count
    }
    return 0
}
