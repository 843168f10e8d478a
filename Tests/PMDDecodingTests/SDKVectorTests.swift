import Testing
@testable import PMDDecoding

// Test vectors copied (bytes and expected values only) from polarofficial/polar-ble-sdk.
// Android test root: sources/Android/android-communications/library/src/test/java/com/polar/
//   androidcommunications/api/ble/model/gatt/client/pmd/
let sdkTimestamp2e9 = hex("00 94 35 77 00 00 00 00") // 2_000_000_000 ns

/// Raw ACC frame type 1 payload from AccDataTest.kt `process acc raw data frame type 1`.
let sdkAccRawType1Payload = hex("F7FFFFFFE703F8FFFEFFE503F9FFFFFFE503FAFFFFFFE603FAFFFEFFE603F9FFFFFFE503F8FFFFFFE603F8FFFEFFE603FAFFFFFFE503FAFFFFFFE703FAFFFFFFE503F8FFFFFFE603F7FFFFFFE603F8FFFEFFE603F9FFFEFFE703F9FF0000E603F9FFFFFFE603F7FFFEFFE503F9FFFFFFE503F9FFFFFFE503FAFF0000E603F9FFFEFFE603F8FFFFFFE603F8FFFFFFE503F9FFFFFFE603F9FFFFFFE503FAFFFFFFE603F9FFFFFFE503F9FFFFFFE503F8FFFEFFE603F9FFFFFFE603F9FFFFFFE603F9FF0000E503F9FFFEFFE603F8FFFEFFE603F7FFFEFFE603")

/// Compressed ACC type 0 payload from AccDataTest.kt `process acc compressed data type 0`.
let sdkAccCompressed0Payload = hex("7107F06A9E8D0A38BE5CBEBA2F96B3EE4BE5ADFB42B9EBBE4CFEBA2F92BFEE4BE4B1FB12B9ECBD3C3EBB2F8FD3DE4BE3B5F7D2B8EDBD307E7B2F8BE3CE8BE2BAF7A2B8EEBC20BE7B2F88F3CECBE1BDEF52F8EFBC18FE3B2F8403BFCBE0C2EF32B8F0BB044EBC2E8113AF0BE0C6EFF2F7F1B9FC7DBC2E7D279F4BDFCAEBC2F7F2B8ECCD7C2E7B378F4BDECEE392F7F3B8E00DFD2D774B7FCBDDD2DF6237F5B7D44DBD2D745B6FCBDCD7D73237F6B5C88D7D2D716B4F4BDCDCD3F236F7B4BCDDFD2C6F7B3F4BDBE0CFD236F8B2B02DBE2C6C8F1FCBDAE3C7A276F9")

/// Delta payload (16-bit, 3 channels) from BlePmdClientParsersTest.kt
/// `test_parseDeltaFrameAllSamples_multipleDeltas`.
let sdkMultipleDeltasPayload = hex("C9FF12001100030941FE2B0F9C0BBF15004F00041EF1EF00F0C123E4EDF4D1F1F1F5FF22DE3100F1FE21021F0E2B1F00E220000E02E11E20FFF1F102C5D002E0E102030A312EFBBA902BAA0E23409E030414E3EFF30F021F01E00F049E13E2D004E222E2C20E200F2002FE000F1C32EE030A890007087C00CE2FE83A9E03041E010011194F002F12FD13FF0E100000F1C012E4EF21000001F1FFFF0210102B510B4E31FC2EBF3114EC0E2F52EF030A069E040E02A888EEE0079A00040A1F211E4E2EFEC6C002EF030102EE11030AF8130000F040BFA5E7007600")

/// 32-bit delta payload from BlePmdClientParsersTest.kt `test_parseDeltaFrameAllSamples_withResolution32_realVector1`.
let sdkRes32RealVector1 = hex("0000803F000020410000A0411C060000A001000008CDCCEC0D000008CDCCEC3D33331ACDCCEC3D33331A0000C03033331A0000C0A09999DA0000C0A09999DA6666A6A19999DA6666A60100000E20036666A6010000E000426C450E0000E000426C450E2BF8ED21000060FDBE93BAF0939B4CCF1C060000A001000008CDCCEC0D000008CDCCEC3D33331ACDCCEC3D33331A0000C03033331A0000C0A09999DA0000C0A09999DA6666A6A19999DA6666A60100000E20036666A6010000E000426C450E0000E000426C450E2BF8ED21000060FDBE93BAF0939B4CCF")

/// 32-bit delta payload from BlePmdClientParsersTest.kt `test_parseDeltaFrameAllSamples_withResolution32`.
let sdkRes32Vector = hex("02000000193299E900DAFEFF2011173299E9E7A7651638DB0646E7A7651638DB064673413BB87A260401C90AFF597707D13287BF019F213E0D91E50176AD213E0D91E50176AD920138CDE50176AD920138CD00548487920138CD0054848778CBEE400054848778CBEE40F1DECC8B78CBEE40F1DECC8B173299E9F1DECC8B173299E9E7A76516173299E9E7A7651638DB0646E7A7651638DB064673413BB87A260401C90AFF597707D13287BF019F213E0D91E50176AD213E0D91E50176AD920138CDE50176AD920138CD00548487920138CD0054848778CBEE40")

@Suite struct SDKVectorTests {
    // model/EcgDataTest.kt `process raw ecg data type 0` (same bytes in iOS
    // sources/iOS/ios-communications/Tests/iOSCommunicationsTests/EcgDataTest.swift testProcessRawEcgDataType0):
    // 02 80 FF -> -32766 µV, 02 80 00 -> 32770 µV, last sample at 2_000_000_000.
    @Test func ecgRawType0() throws {
        let bytes = [0x00] + sdkTimestamp2e9 + [0x00] + hex("02 80 FF 02 80 00")
        let frame = try PMDDataFrame(bytes: bytes)
        #expect(frame.header.measurementType == .ecg)
        #expect(frame.header.timestamp == 2_000_000_000)
        #expect(!frame.header.isCompressed && frame.header.frameType == 0)
        #expect(frame.samples == .ecg([-32766, 32770]))
    }

    // model/AccDataTest.kt `process acc raw data frame type 1`: first samples (-9,-1,999),
    // (-8,-2,997); 216 bytes / 6 = 36 samples; timestamp 2_000_000_000.
    @Test func accRawType1() throws {
        let frame = try PMDDataFrame(bytes: [0x02] + sdkTimestamp2e9 + [0x01] + sdkAccRawType1Payload)
        guard case .acc(let s) = frame.samples else { Issue.record("not acc"); return }
        #expect(s.count == 36)
        #expect(s[0] == PMDAccSample(x: -9, y: -1, z: 999))
        #expect(s[1] == PMDAccSample(x: -8, y: -2, z: 997))
        #expect(s.last == PMDAccSample(x: -9, y: -2, z: 998))
        #expect(frame.header.timestamp == 2_000_000_000)
    }

    // model/AccDataTest.kt `process acc compressed data type 0` (iOS AccDataTest.swift
    // testProcessAccCompressedFrameType0): reference (1905, 27376, -29282), first deltas
    // (+190, -105, -85), 57 samples, factor 2.44E-4, values = Int(factor * s * 1000), |v| <= 8000.
    @Test func accCompressedType0() throws {
        let factor: Float = 2.44E-4
        let frame = try PMDDataFrame(bytes: [0x02] + sdkTimestamp2e9 + [0x80] + sdkAccCompressed0Payload, factor: factor)
        guard case .acc(let s) = frame.samples else { Issue.record("not acc"); return }
        #expect(s.count == 57)
        let raw: [[Int32]] = [[1905, 27376, -29282], [1905 + 190, 27376 - 105, -29282 - 85]]
        for (i, r) in raw.enumerated() {
            #expect(s[i].x == Int32(factor * Float(r[0]) * 1000))
            #expect(s[i].y == Int32(factor * Float(r[1]) * 1000))
            #expect(s[i].z == Int32(factor * Float(r[2]) * 1000))
        }
        for a in s { #expect(abs(a.x) <= 8000 && abs(a.y) <= 8000 && abs(a.z) <= 8000) }
    }

    // model/AccDataTest.kt `process acc compressed data type 1` (iOS testProcessAccCompressedFrameType1):
    // F1 FF 14 00 F0 03 | 06 01 | 7B 0F 08 -> (-15, 20, 1008), (-20, 17, 1008); timestamp 0x65.
    @Test func accCompressedType1() throws {
        let bytes = hex("02 65 00 00 00 00 00 00 00 81") + hex("F1 FF 14 00 F0 03 06 01 7B 0F 08")
        let frame = try PMDDataFrame(bytes: bytes)
        #expect(frame.header.timestamp == 101 && frame.header.isCompressed && frame.header.frameType == 1)
        #expect(frame.samples == .acc([PMDAccSample(x: -15, y: 20, z: 1008), PMDAccSample(x: -20, y: 17, z: 1008)]))
    }

    // BlePmdClientParsersTest.kt `test_parseDeltaFrameAllSamples_multipleDeltas`: 16-bit, 3 channels,
    // 140 samples; sample 0 = (-55, 18, 17), sample 1 = (-54, 18, 18). Wrapped here in an ACC 0x81 frame.
    @Test func multipleDeltaBlocks() throws {
        let frame = try PMDDataFrame(bytes: [0x02] + sdkTimestamp2e9 + [0x81] + sdkMultipleDeltasPayload)
        guard case .acc(let s) = frame.samples else { Issue.record("not acc"); return }
        #expect(s.count == 1 + 9 + 30 + 10 + 20 + 10 + 30 + 10 + 10 + 10)
        #expect(s[0] == PMDAccSample(x: -55, y: 18, z: 17))
        #expect(s[1] == PMDAccSample(x: -54, y: 18, z: 18))
    }

    // BlePmdClientParsersTest.kt `parse reference sample when resolution16 and type is unsigned int`:
    // FF FF 00 00 FF 7F 00 80 with 4 channels -> -1, 0, 32767, -32768.
    @Test func referenceSample16Bit() throws {
        let v = try PMDDeltaCodec.decode(hex("FF FF 00 00 FF 7F 00 80"), from: 0, channels: 4, resolutionBits: 16)
        #expect(v == [-1, 0, 32767, -32768])
    }

    // BlePmdClientParsersTest.kt `test_parseDeltaFrameAllSamples_withResolution32_realVector1`:
    // 19 samples; sample0 = 3F800000, 41200000, 41A00000; sample1 = +01A00000, +00800000, +FDECCCCD (28-bit delta).
    @Test func delta32BitRealVector1() throws {
        let v = try PMDDeltaCodec.decode(sdkRes32RealVector1, from: 0, channels: 3, resolutionBits: 32)
        #expect(v.count == 19 * 3)
        let s0: [Int32] = [0x3F80_0000, 0x4120_0000, 0x41A0_0000]
        let d1: [Int32] = [0x01A0_0000, 0x0080_0000, Int32(bitPattern: 0xFDEC_CCCD)]
        let s1: [Int32] = [s0[0] &+ d1[0], s0[1] &+ d1[1], s0[2] &+ d1[2]]
        #expect(Array(v[0..<3]) == s0)
        #expect(Array(v[3..<6]) == s1)
    }

    // BlePmdClientParsersTest.kt `test_parseDeltaFrameAllSamples_withResolution32`: 18 samples;
    // sample0 = 00000002, E9993219, FFFEDA00; sample1 = sample0 + (E9993217, 1665A7E7, 4606DB38).
    @Test func delta32BitVector() throws {
        let v = try PMDDeltaCodec.decode(sdkRes32Vector, from: 0, channels: 3, resolutionBits: 32)
        #expect(v.count == 18 * 3)
        let s0: [Int32] = [2, Int32(bitPattern: 0xE999_3219), Int32(bitPattern: 0xFFFE_DA00)]
        #expect(Array(v[0..<3]) == s0)
        let d1: [Int32] = [Int32(bitPattern: 0xE999_3217), 0x1665_A7E7, 0x4606_DB38]
        let s1: [Int32] = [s0[0] &+ d1[0], s0[1] &+ d1[1], s0[2] &+ d1[2]]
        #expect(Array(v[3..<6]) == s1)
    }

    // model/PpiDataTest.kt `process ppi raw data type 0`: (hr 128, pp 32896, err 32896, flags FF),
    // (hr 0, pp 1, err 1, flags 00).
    @Test func ppiType0() throws {
        let bytes = hex("03 00 00 00 00 00 00 00 00 00") + hex("80 80 80 80 80 FF 00 01 00 01 00 00")
        let frame = try PMDDataFrame(bytes: bytes)
        guard case .ppi(let s) = frame.samples else { Issue.record("not ppi"); return }
        #expect(s == [PMDPPISample(heartRate: 128, intervalMs: 32896, errorEstimateMs: 32896, flags: 0xFF),
                      PMDPPISample(heartRate: 0, intervalMs: 1, errorEstimateMs: 1, flags: 0)])
        #expect(s[0].blocker && s[0].skinContact && s[0].skinContactSupported)
        #expect(!s[1].blocker && !s[1].skinContact && !s[1].skinContactSupported)
    }

    // BlePmdClientTest.kt `process ecg data`: header 00 38 6C 31 72 A4 D3 23 0D 03 ->
    // timestamp 946833049921875000, raw frame type 3 (not decoded here -> unsupported).
    @Test func ecgHeaderAndUnsupportedFrameType() throws {
        let bytes = hex("00 38 6C 31 72 A4 D3 23 0D 03 00 12 03 11 10 04 00")
        let header = try PMDFrameHeader(bytes: bytes)
        #expect(header.timestamp == 946_833_049_921_875_000)
        #expect(header.frameType == 3 && !header.isCompressed)
        #expect(throws: PMDDecodingError.unsupported(measurementType: 0, frameType: 3)) { try PMDDataFrame(bytes: bytes) }
    }

    // BlePmdClientControlPointResponseTest.kt `success control point response for acc stream settings`:
    // F0 01 02 00 00 FF FF FF -> get settings, ACC, success, more=false, parameters FF FF FF.
    @Test func controlPointSuccess() throws {
        let r = try PMDControlPointResponse(bytes: hex("F0 01 02 00 00 FF FF FF"))
        #expect(r.opCode == .getMeasurementSettings)
        #expect(r.measurementType == .acc)
        #expect(r.error == nil && r.status == 0)
        #expect(r.more == false)
        #expect(r.parameters == [0xFF, 0xFF, 0xFF])
    }

    // BlePmdClientControlPointResponseTest.kt `failing control point response for mag stream settings`:
    // F0 01 06 07 00 -> get settings, MAG, ERROR_INVALID_RESOLUTION, more=false, no parameters.
    @Test func controlPointFailure() throws {
        let r = try PMDControlPointResponse(bytes: hex("F0 01 06 07 00"))
        #expect(r.opCode == .getMeasurementSettings)
        #expect(r.measurementType == .magnetometer)
        #expect(r.error == .invalidResolution)
        #expect(r.more == false && r.parameters.isEmpty)
        #expect(throws: PMDControlPointError.invalidResolution) { try r.checkSuccess() }
    }

    // PmdSettingTest.kt `testPmdSettingsWithRange`: sample rate 52, resolution 16,
    // ranges 245/500/1000/2000, channels 3.
    @Test func settingsWithRange() throws {
        let s = try PMDAvailableSettings(parameters: hex("00 01 34 00 01 01 10 00 02 04 F5 00 F4 01 E8 03 D0 07 04 01 03"))
        #expect(s.sampleRates == [52])
        #expect(s.resolutions == [16])
        #expect(s.ranges == [245, 500, 1000, 2000])
        #expect(s.channels == [3])
        #expect(s.rangesMilliUnit.isEmpty && s.factors.isEmpty)
        #expect(s.presentTypes == [.sampleRate, .resolution, .range, .channels])
    }

    // PmdSettingTest.kt `testPmdSettingWithRangeMilliUnit`: range milli-unit {-1, 0xFF}, resolution 14.
    @Test func settingsWithRangeMilliUnit() throws {
        let s = try PMDAvailableSettings(parameters: hex("03 02 FF FF FF FF FF 00 00 00 01 01 0E 00"))
        #expect(s.rangesMilliUnit == [-1, 0xFF])
        #expect(s.resolutions == [14])
        #expect(s.presentTypes == [.rangeMilliUnit, .resolution])
    }

    // BlePmdClientTest.kt `process measurement stop control point command`: 01 01 02 ->
    // online measurement stopped for PPG (1) and ACC (2).
    @Test func measurementStoppedIndication() throws {
        #expect(try PMDControlPointIndication(bytes: hex("01 01 02")) == .onlineMeasurementStopped(rawTypes: [1, 2]))
    }
}
