import Testing
@testable import PMDDecoding

// Hand-made vectors (no polar-ble-sdk test exists for these), built from the layout facts.
@Suite struct OwnVectorTests {
    @Test func accRawType0Int8() throws {
        let frame = try PMDDataFrame(bytes: frameHeader(type: 2, timestamp: 5, frameType: 0) + hex("01 FF 7F 80 00 10"))
        #expect(frame.samples == .acc([PMDAccSample(x: 1, y: -1, z: 127), PMDAccSample(x: -128, y: 0, z: 16)]))
    }

    @Test func accRawType2Int24() throws {
        let frame = try PMDDataFrame(bytes: frameHeader(type: 2, timestamp: 5, frameType: 2)
                                     + hex("FF FF FF 00 00 80 FF FF 7F"))
        #expect(frame.samples == .acc([PMDAccSample(x: -1, y: -8_388_608, z: 8_388_607)]))
    }

    @Test func features() throws {
        // H10: ECG + ACC; Verity Sense style: PPG, ACC, PPI, GYRO, MAG, SDK mode.
        let h10 = try PMDFeatures(controlPointValue: hex("0F 05 00"))
        #expect(h10.supported == [.ecg, .acc])
        let verity = try PMDFeatures(controlPointValue: hex("0F 6E 02"))
        #expect(verity.supported == [.ppg, .acc, .ppi, .gyro, .magnetometer, .sdkMode])
        #expect(throws: PMDDecodingError.invalidFeaturesHeader(0xF0)) { try PMDFeatures(controlPointValue: [0xF0, 1]) }
        #expect(throws: PMDDecodingError.truncated(.features, needed: 2, available: 1)) { try PMDFeatures(controlPointValue: [0x0F]) }
    }

    @Test func requests() {
        #expect(PMDControlPointRequest.getSettings(.ecg).bytes == [0x01, 0x00])
        #expect(PMDControlPointRequest.stop(.acc).bytes == [0x03, 0x02])
        // H10 ECG start as used by bleakheart / Polar docs: 130 Hz, 14 bit.
        #expect(PMDControlPointRequest.start(.ecg, .h10ECG).bytes == hex("02 00 00 01 82 00 01 01 0E 00"))
        #expect(PMDControlPointRequest.start(.acc, .h10ACC).bytes == hex("02 02 00 01 C8 00 01 01 10 00 02 01 08 00"))
        #expect(PMDControlPointRequest.start(.ppg, PMDSettings(sampleRate: 55, resolution: 22, channels: 4)).bytes
                == hex("02 01 00 01 37 00 01 01 16 00 04 01 04"))
    }

    @Test func settingsRoundTripAndFactor() throws {
        let s = PMDSettings(sampleRate: 52, resolution: 16, range: 8, channels: 3)
        let back = try PMDAvailableSettings(parameters: s.encoded)
        #expect(back.sampleRates == [52] && back.resolutions == [16] && back.ranges == [8] && back.channels == [3])
        // Start response with a FACTOR (float32 LE 2.44e-4 = 0x397FDA56... computed here).
        let bits = Float(2.44e-4).bitPattern
        let params: [UInt8] = [5, 1] + (0..<4).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt32($0))) }
        let r = try PMDControlPointResponse(bytes: [0xF0, 0x02, 0x02, 0x00, 0x00] + params)
        #expect(try r.availableSettings().factors == [Float(2.44e-4)])
        #expect(throws: PMDDecodingError.unknownSettingType(9)) { try PMDAvailableSettings(parameters: [9, 1, 0]) }
    }

    @Test func statusCodes() throws {
        let names: [PMDControlPointError] = [.invalidOpCode, .invalidMeasurementType, .notSupported, .invalidLength,
                                             .invalidParameter, .alreadyInState, .invalidResolution, .invalidSampleRate,
                                             .invalidRange, .invalidMTU, .invalidNumberOfChannels, .invalidState,
                                             .deviceInCharger, .diskFull]
        #expect(PMDControlPointError(status: 0) == nil)
        for (i, e) in names.enumerated() {
            #expect(PMDControlPointError(status: UInt8(i + 1)) == e)
            #expect(e.status == UInt8(i + 1))
        }
        #expect(PMDControlPointError(status: 200) == .unknown(200))
        #expect(throws: PMDDecodingError.invalidResponseCode(0x01)) { try PMDControlPointResponse(bytes: [1, 2, 3, 4]) }
        #expect(throws: PMDDecodingError.truncated(.controlPointResponse, needed: 4, available: 3)) {
            try PMDControlPointResponse(bytes: [0xF0, 2, 3])
        }
    }

    @Test func errorsNameTheProblem() {
        #expect(throws: PMDDecodingError.truncated(.frameHeader, needed: 10, available: 3)) { try PMDDataFrame(bytes: [0, 0, 0]) }
        #expect(throws: PMDDecodingError.noSamples) { try PMDDataFrame(bytes: frameHeader(type: 0, timestamp: 0, frameType: 0)) }
        #expect(throws: PMDDecodingError.partialSample(payloadLength: 4, sampleSize: 3)) {
            try PMDDataFrame(bytes: frameHeader(type: 0, timestamp: 0, frameType: 0) + [1, 2, 3, 4])
        }
        #expect(throws: PMDDecodingError.unsupported(measurementType: 2, frameType: 0x85)) {
            try PMDDataFrame(bytes: frameHeader(type: 2, timestamp: 0, frameType: 0x85) + [1])
        }
        #expect(throws: PMDDecodingError.unsupported(measurementType: 0x3E, frameType: 0)) {
            try PMDDataFrame(bytes: frameHeader(type: 0x3E, timestamp: 0, frameType: 0) + [1])
        }
        #expect(throws: PMDDecodingError.invalidDeltaBitWidth(block: 0, bitWidth: 33)) {
            try PMDDataFrame(bytes: frameHeader(type: 2, timestamp: 0, frameType: 0x81) + [0, 0, 0, 0, 0, 0, 33, 1])
        }
        #expect(throws: PMDDecodingError.truncated(.deltaBlockData(block: 0), needed: 3, available: 2)) {
            try PMDDataFrame(bytes: frameHeader(type: 2, timestamp: 0, frameType: 0x81) + [0, 0, 0, 0, 0, 0, 6, 1, 0, 0])
        }
        #expect(throws: PMDDecodingError.truncated(.referenceSample, needed: 6, available: 5)) {
            try PMDDataFrame(bytes: frameHeader(type: 2, timestamp: 0, frameType: 0x81) + [0, 0, 0, 0, 0])
        }
    }
}
