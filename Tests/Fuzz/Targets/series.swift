// libFuzzer target: the stored series chunks (points and anchors blobs) as a damaged store
// file could hand them back: every reader must fail with a typed error, never trap.
import SeriesCoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSeries(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    _ = try? QuantitySeriesReader.decode(bytes)
    _ = try? HeartbeatSeriesReader.decode(bytes)
    if var reader = try? QuantitySeriesReader(bytes) {
        while let point = try? reader.next() { _ = point }
    }
    return 0
}
