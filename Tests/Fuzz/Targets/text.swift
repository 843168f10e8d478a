// libFuzzer target: what users type: units in HealthKit's grammar (`count/min`, `kcal`,
// `mg/dL`), times (RFC 3339 and ages such as `15m`).
import CommandSupport
import HealthUnits
import Timestamps

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzText(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let unit = try? HealthUnit(from: text) {
        _ = unit.unitString
        _ = try? unit.convert(72, to: unit)
        _ = try? HealthUnit(from: unit.unitString)
    }
    if let time = RFC3339.parse(text) {
        let again = RFC3339.parse(RFC3339.string(from: time, fractionDigits: 6))
        precondition(again == time, "a parsed time does not survive formatting")
    }
    _ = TimeExpression.parse(text, now: Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000))
    return 0
}
