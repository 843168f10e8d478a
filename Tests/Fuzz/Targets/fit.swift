// libFuzzer target: a FIT file from a watch or a strap, decoded as `hrmctl replay` and
// `hrmd --sensor replay:` read it (heart-rate records, devices, damage), streamed in two
// passes and decoded whole, which must agree.
import ByteSources
import FITDecoding
import Recordings

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFIT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let whole = try? FITDecoder.decodeActivityPartially(bytes), let summary = try? FITHeartRateSummary(scanning: ByteSource(bytes)) {
        let records = (try? FITHeartRateRecords(ByteSource(bytes), summary: summary)).map { Array($0) }
        precondition(records == whole.records, "the streamed records differ from the whole file's")
        precondition(summary.recordCount == whole.records.count && summary.damage == whole.damage, "the first pass differs")
    }
    if let recording = try? FITRecording(bytes: bytes, name: "fuzz.fit", acceptingDamage: true) {
        _ = Array(recording).count
    }
    return 0
}
