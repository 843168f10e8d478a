// libFuzzer target: Polar PMD messages as a strap sends them (data frames of ECG,
// acceleration and PPI, raw and delta-compressed; control point responses and indications;
// the features value; the requests a client writes, as traces keep them). The first byte
// chooses the decoder; a decoded frame must hold at
// least one sample, and its samples must be timed one by one, the last at the frame's stamp.
import PMDDecoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPMD(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 4 {
    case 0, 1:
        if let frame = try? PMDDataFrame(bytes: bytes, factor: data[0] % 4 == 0 ? 1 : 0.24) {
            precondition(frame.samples.count > 0, "a decoded frame without samples")
            var timer = PMDSampleTimer(nominalSampleRate: 130)
            let times = timer.sampleTimes(frameTimestamp: frame.header.timestamp, sampleCount: frame.samples.count)
            precondition(times.count == frame.samples.count && times.last == frame.header.timestamp, "samples timed wrongly")
        }
    case 2:
        if let response = try? PMDControlPointResponse(bytes: bytes) { _ = try? response.availableSettings() }
        _ = try? PMDControlPointIndication(bytes: bytes)
    default:
        _ = try? PMDFeatures(controlPointValue: bytes)
        // A request as a trace keeps it: one that parses must write back the settings it read.
        if case .start(let type, let settings)? = try? PMDControlPointRequest(bytes: bytes) {
            precondition(try! PMDControlPointRequest(bytes: PMDControlPointRequest.start(type, settings).bytes) == .start(type, settings),
                         "a parsed start request does not round-trip")
        }
    }
    return 0
}
