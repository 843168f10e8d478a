/// The waveform chunk (`SeriesFormat` version 2, kind `W`): regularly sampled integers of 1
/// to 8 channels — ECG in microvolts, three axes of acceleration in milli-g — without their
/// times, which the store keeps beside the chunk (the first sample's time and the sampling
/// rate). The samples are interleaved by instant: instant i holds channel 0 … channels − 1.
/// Any `Int32` samples round-trip exactly.
///
/// Each channel is coded on its own, in the way of FLAC's subframes: a sample is predicted
/// from the ones before it, by a fixed polynomial or by linear prediction with quantized
/// integer coefficients, and the residual (sample less prediction) written in a partitioned
/// Rice code. The encoder measures, header fields included, and keeps the smallest.
///
/// ## Layout
///
/// The version and kind bytes, the count (LEB128, as in `SeriesFormat`), then one bit stream
/// (most significant bit first, the last byte padded with zero bits). *zigzag w* is a signed
/// integer zigzag-mapped (0, −1, 1, −2 … → 0, 1, 2, 3 …) in w bits; *Rice k* of an unsigned
/// u is ⌊u / 2ᵏ⌋ zero bits, a one bit, and the low k bits of u.
///
/// | field | size | meaning |
/// | --- | --- | --- |
/// | version | 1 byte | 2 |
/// | kind | 1 byte | `W` (0x57) |
/// | count | uvarint | instants in the chunk |
/// | channels | 3 bits | channels less 1 (1 … 8 channels) |
/// | *the rest only when count ≥ 1* | | |
/// | subframes | bits | one per channel, channel 0 first, each over all instants |
///
/// A subframe starts with its type, 2 bits. A predicted one (fixed or linear) of order p ≥ 1
/// then holds its first sample as it is, and every later sample as a residual:
///
/// | type | fields after the type |
/// | --- | --- |
/// | 0 constant | width w (6 bits), the value (zigzag w) |
/// | 1 verbatim | width w (6 bits), every sample (zigzag w) |
/// | 2 fixed | order p (3 bits, 0 … 4); if p ≥ 1, width w (6 bits) and sample 0 (zigzag w); residuals |
/// | 3 linear | order p less 1 (4 bits, 1 … 12), precision b less 1 (4 bits), shift s (5 bits), p coefficients (b-bit two's complement), width w (6 bits), sample 0 (zigzag w), residuals |
///
/// **Prediction.** In 64-bit integers. The fixed predictors of order 0 … 4 are 0, x₋₁,
/// 2x₋₁ − x₋₂, 3x₋₁ − 3x₋₂ + x₋₃ and 4x₋₁ − 6x₋₂ + 4x₋₃ − x₋₄ (the polynomial through the last
/// p samples, extended by one); the linear predictor is (c₀x₋₁ + c₁x₋₂ + … + cₚ₋₁x₋ₚ) >> s, an
/// arithmetic shift (rounding toward −∞). Sample i ≥ p is predicted by the subframe's
/// predictor; the lead-in, samples 1 … p − 1, by the fixed predictor of order min(i, 2).
///
/// **Residuals.** A residual is the sample less its prediction, zigzag-mapped: one for each
/// instant after sample 0 (from instant 0 for fixed order 0). The instants are cut into 2^o
/// partitions: partition j holds instants ⌊j·count / 2^o⌋ up to ⌊(j + 1)·count / 2^o⌋, less
/// those without a residual (a partition may be empty). Each partition has a *selector*: a
/// Rice parameter 0 … 30, or 31 for an escape to plain fields.
///
/// | field | size | meaning |
/// | --- | --- | --- |
/// | partition order o | 4 bits | 2^o partitions |
/// | step parameter m | 1 bit | the Rice parameter of the selector steps |
/// | *each partition* | | |
/// | selector | 5 bits (the first), Rice m (the others) | the first as it is; each other as the zigzag-mapped step from the one before, which must land in 0 … 31 |
/// | escape: width w | 6 bits | w less 1 (1 … 64 bits) |
/// | residuals | bits | each in Rice k (selector k), or in w bits (escape) |
///
/// Coding each selector as a step from the one before costs a noisy signal, whose parameters
/// wander by one, 1 to 3 bits instead of 5; the encoder chooses the order, m and all
/// selectors together for the fewest bits, which makes fine partitions (4 instants and up)
/// pay around each QRS complex of an ECG.
///
/// **Choosing.** For each channel the encoder estimates the fixed predictors, the linear
/// predictors of the best three orders (by prediction error) from the autocorrelation under a
/// tapered and a rectangular window, and two rounds of iteratively reweighted least squares
/// (weights 1 / |e| from the best residuals so far: least absolute residuals, which Rice
/// rewards, where least squares chases the largest), each quantized to 6, 8, 10 and 12 bits;
/// it sizes the best three exactly, and keeps the smallest of them, verbatim and constant.
/// Some 1 ms per thousand samples (release build); decoding takes some 10 µs.
///
/// Sizes against the `flac` command (version 1.4; the same integers as 16-bit PCM, its
/// frames of 4096 samples alone, without the 9 KiB of metadata and padding of its file):
///
/// | signal, in chunks of 1024 instants | bits per sample | `flac` | `flac -8` |
/// | --- | --- | --- | --- |
/// | simulated ECG, 130 Hz, µV (neurokit2) | 3.94 | 4.51 | 4.45 |
/// | the same, with breathing wander and 20 µV of noise | 7.55 | 7.62 | 7.62 |
/// | MIT-BIH record 208 resampled to 130 Hz, µV | 8.40 | 8.82 | 8.81 |
/// | MIT-BIH record 208, 360 Hz, µV | 6.79 | 6.86 | 6.84 |
/// | acceleration, 3 axes, 50 Hz, mG (simulated walk) | 5.45 | 5.81 | 5.40 |
///
/// Chunks of 4096 instants save another 0.5 to 3 %; of 512 they cost about as much more.
///
/// **Bounds.** Every subframe but a constant one spends a bit per instant at least, and a
/// chunk whose channels would all cost less writes channel 0 verbatim, so a chunk of n bytes
/// holds at most 8n instants: a reader checks the count against the bytes before it
/// allocates anything. A sample that decodes beyond `Int32` is a corrupt sample.
public enum WaveformFormat {
    /// The most channels a chunk holds.
    public static let maximumChannels = 8
    /// The bits of a sample width field.
    static let widthBits = 6
    /// The largest shift of a linear predictor (5 bits).
    static let maximumShift = 31

    /// Writes the version, kind, count and channels; the subframes follow.
    static func writer(count: Int, channels: Int, capacity: Int) -> BitWriter {
        var writer = SeriesFormat.writer(for: .waveform, capacity: capacity)
        writer.writeVarint(UInt64(count))
        writer.write(UInt64(channels - 1), width: 3)
        return writer
    }

    /// Checks the version and kind bytes and reads the count and channels; the reader is left
    /// at the first subframe. Each instant costs at least one bit, so a count the bytes cannot
    /// hold means they were cut short.
    static func readHeader(_ bytes: [UInt8]) throws(SeriesCodingError) -> (reader: BitReader, count: Int, channels: Int) {
        var (reader, count, version) = try SeriesFormat.readPrologue(bytes, kind: .waveform)
        // Waveforms came with version 2: a version 1 chunk of this kind was never written.
        guard version >= 2 else { throw .unknownVersion(version) }
        let channels = Int(try reader.read(3)) + 1
        guard count <= reader.remainingBits else { throw .truncated(atBit: 8 * bytes.count) }
        return (reader, count, channels)
    }
}
