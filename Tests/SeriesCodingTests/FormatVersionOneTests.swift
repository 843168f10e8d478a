@testable import SeriesCoding
import TestSupport
import Testing

/// Chunks in format version 1, as the version 1 encoder wrote them (into the stores of hrmd
/// before format version 2): they decode to the same points for as long as stores hold them.
@Suite("Series chunk format version 1")
struct FormatVersionOneTests {
    /// `TestSeries(seed: 600 + index of the shape)`, 24 points of each shape, as version 1
    /// wrote them (hex).
    static let quantityChunks: [TestSeries.Shape: String] = [
        .strapMilliseconds:
            "0151186457eaf6f73300c600f483e0c1c600c0550a93a91ac3b8164b619279ba6cd99a0250250e84d50755b4e02d2dc4" +
            "b192",
        .strapMicroseconds:
            "0151187458ff714469518300c300e3215ea2044a80eaacddb57e052ac29139b90600d4735a8a0cda336dae3abd000020" +
            "1dccaaa657ea0f221fe1023dc32f3bd065115874218ebc0e09ca11bd0507b10dca00",
        .fourHertz:
            "01511840526af6f73300c900fd00c0e0344ee98564b3c10dd48392ad24b6941019dcc8ceb10249ccecd1aa210900",
        .rrSeconds:
            "0151185c566af6f733400473066e0300e0a6452803093b383c15d498a38f1bf2acb6c1b8acc4d0a2b24d943d05079cc0" +
            "4bcfc11f5e3e9be1418211bf1cda3c3f53ac00",
        .decimals:
            "0151185157eaf6f73305745880f683d0a1d1a4352a65fca0581654d590518f49779d943a819c3eefc8849db676177da2" +
            "30e7b6e7d201bf7c7bb21b545aa68cb41909d55d632d152b3da066a13461cb74c3ef6714e0",
        .randomBits:
            "015118e0e0e077fd5e735fcf80e08c42297cb1b468f8e2bef7fbb323225010102ac21584cc4b36079a374c21fdc6ff75" +
            "fb879315db73f16be07d00103574bbe6734feef806300da8c6459b8ebe543214142b9dec15737039d7afc0fe003e9806" +
            "3c2190cda17741fbdf91b55a842276670ae99a3e07f0356c74feeff0fe37f6f280329a784c28068aecde6dda27b20189" +
            "46442d2327eb9996e31c20e18aafc052cd67acf8e238e07d0011b776432f68e60105b65484e094a7999e9b623b41e94e" +
            "e6199f4b18811a25303f8016e0495aa35c3dba9a6feebc26e6e2c03d1a634c943e1c111ff0ef04505ff28807a72eca23" +
            "3f53e302a4ad25c55579b7000dbb20c60fd3dd56e80bbb4ef90167681e8e9390c5c61d6d8951121641dae71d03cb2694" +
            "6f414f49d133b26aec735f0ca0072bc8df561a0c3a40cb1bbc7e791314003e2559be065944ad222747969152eb2f2881" +
            "10420dd1df0926fffdd2022edfb04bf798c964a6fa92b36dc8cd835f1f6fea0392b8e1fab556c24458b38a806bc1fc57" +
            "9fcb42a6a7d2fefb8cb72bf20d45bfd52a3f82",
        .equalAndBackwardTimes:
            "015118684c3d00cb0140200105a1c4ff3d58074eb7fd06e8adc66e15172dca56c01fd003a4746ec2164ff3e81fe7ad7f" +
            "428aa5d6972fe7a3ff4178",
        .hugeGaps:
            "0151187357fcf14469518300c700e2375ea1c415a14419e47946e49b82c1f41a2f0cd65645ddccf2a11fcf53fd979bf1" +
            "077cede46013adced740b67892ca0a23d540835d62b5d4c4f829e9d95bebcdf9031cc43ed21bfe66780002d2603e80",
        .extremes:
            "015118817ff80000000000000050903ffffffffffffffff805fff8b17aac0224d7949da062c1fa2b4986ef470600dfff" +
            "fffffffffffff2069243f6a8885a31fffffffffffffffb81a490fdaa22168c7fffffffffffffffa801243f6a8885a300" +
            "ab4e4fa5c834df1e7ffffffffffffffeaad193e9720d37c78ac127ff2e5e9fffffffffffffffffffffffffffffe0fd01" +
            "59999999999995181f5fdccccccccccccd4e095ffffffffffffffffff73cb16017f961c0feffc0000000000004540000" +
            "000000000008f04d80a7fffffffffffffff78dce240000000000025c3f3e4ec0c7d152e96a6c1f71ef7cfd38987697ff" +
            "fffffffffffffd617bfdccccccccccccdfffffffffffffffeefee666666666666c",
    ]

    /// `TestSeries(seed: 700 + i).beats(24, gapRate:)` for the gap rates 0 and 0.2.
    static let heartbeatChunks: [Double: String] = [
        0.0:
            "0148180062072982c0d9119361db22bcaec289150b656f1956e5a8",
        0.2:
            "014818b207fc41b060e37b129775954f393d3ffaf23bf3de39faacedb2002d070d2c518e83891500",
    ]

    static func bytes(_ hex: String) -> [UInt8] { [UInt8](hex: hex) }

    static func points(_ shape: TestSeries.Shape) throws -> [QuantitySeriesPoint] {
        let index = try #require(TestSeries.Shape.allCases.firstIndex(of: shape))
        var series = TestSeries(seed: 600 + UInt64(index))
        return series.series(shape, count: 24)
    }

    @Test("quantity chunks of every shape decode to the points they were written from", arguments: TestSeries.Shape.allCases)
    func quantity(shape: TestSeries.Shape) throws {
        let chunk = Self.bytes(try #require(Self.quantityChunks[shape]))
        #expect(chunk[0] == 1)
        #expect(sameBits(try QuantitySeriesReader.decode(chunk), try Self.points(shape)))
    }

    @Test("heartbeat chunks, with and without gaps, decode to the beats they were written from", arguments: [0, 0.2])
    func heartbeats(gapRate: Double) throws {
        let chunk = Self.bytes(try #require(Self.heartbeatChunks[gapRate]))
        #expect(chunk[0] == 1)
        var series = TestSeries(seed: gapRate == 0 ? 700 : 701)
        #expect(try HeartbeatSeriesReader.decode(chunk) == series.beats(24, gapRate: gapRate))
    }

    @Test("a version 1 chunk resumed and extended is written in the current version with every point")
    func resumed() throws {
        for shape in TestSeries.Shape.allCases {
            var encoder = try QuantitySeriesEncoder(resuming: Self.bytes(try #require(Self.quantityChunks[shape])))
            encoder.append(time: 42, value: 7)
            let chunk = encoder.encoded()
            #expect(chunk[0] == SeriesFormat.version)
            #expect(sameBits(try QuantitySeriesReader.decode(chunk), try Self.points(shape) + [QuantitySeriesPoint(time: 42, value: 7)]))
        }
        var beats = try HeartbeatSeriesEncoder(resuming: Self.bytes(try #require(Self.heartbeatChunks[0.2])))
        beats.append(offset: 1 << 40, precededByGap: true)
        var series = TestSeries(seed: 701)
        #expect(try HeartbeatSeriesReader.decode(beats.encoded()) == series.beats(24, gapRate: 0.2) + [Heartbeat(offset: 1 << 40, precededByGap: true)])
    }
}
