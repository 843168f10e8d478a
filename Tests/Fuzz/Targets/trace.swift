// libFuzzer target: an hrmd trace (JSON Lines): the header line, then each line decoded into
// a frame as replays read them.
import TraceFormat

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrace(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = UnsafeBufferPointer(start: data, count: size)
    var decoder = TraceDecoder()
    var first = true
    for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        if first {
            first = false
            _ = try? TraceLine.decodeHeader(String(decoding: line, as: UTF8.self))
            _ = TraceLine.looksLikeTrace(Array(line))
        }
        let frame = UnsafeBufferPointer(rebasing: line).withMemoryRebound(to: UInt8.self) { try? decoder.decode(utf8: $0) }
        if let frame {
            // What decodes, encodes, and decodes to the same frame.
            let again = try? TraceLine.decode(TraceLine.encode(frame))
            precondition(again == frame, "a decoded trace line does not survive encoding")
        }
    }
    return 0
}
