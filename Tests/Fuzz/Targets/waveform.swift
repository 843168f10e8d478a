// libFuzzer target: waveform chunks (kind W) as a damaged store file could hand them back:
// the reader must fail with a typed error, never trap, and never allocate more than the bytes
// allow; samples it decodes must encode again and decode back to themselves.
import SeriesCoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWaveform(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let reader = try? WaveformReader(bytes) else { return 0 }
    precondition(reader.count <= 8 * size, "a chunk declares more instants than its bits")
    guard let samples = try? reader.samples() else { return 0 }
    precondition(samples.count == reader.count * reader.channels, "samples and the declared count disagree")
    var encoder = WaveformEncoder(channels: reader.channels)
    encoder.append(interleaved: samples)
    precondition((try? WaveformReader.decode(encoder.encoded())) == samples, "samples did not survive encoding again")
    return 0
}
