// libFuzzer target: /etc/hrmd/hrmd.conf and --sensor specifications.
import HRMConfiguration

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? DaemonConfiguration(text: text, file: "fuzz.conf")
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(64) {
        _ = try? SensorSpec(parsing: String(line))
    }
    return 0
}
