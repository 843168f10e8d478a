import Testing
@testable import PMDDecoding

@Suite("Control point requests read back from the bytes a client wrote (what a trace keeps)")
struct ControlPointRequestTests {
    @Test("start, stop and get-settings requests parse to what was written")
    func roundTrips() throws {
        let requests: [PMDControlPointRequest] = [
            .start(.ecg, .h10ECG), .start(.acc, .h10ACC), .start(.acc, PMDSettings(sampleRate: 50, resolution: 16, range: 8, channels: 3)),
            .start(.ppi, PMDSettings()), .stop(.ecg), .getSettings(.acc),
        ]
        for request in requests { #expect(try PMDControlPointRequest(bytes: request.bytes) == request) }
    }

    @Test("the H10's own start request (polar-ble-sdk's ECG example: 130 Hz, 14 bit) reads as 130 Hz, 14 bit")
    func sdkStart() throws {
        // 02 00 | 00 01 82 00 | 01 01 0e 00
        #expect(try PMDControlPointRequest(bytes: [0x02, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00]) == .start(.ecg, .h10ECG))
    }

    @Test("short, unknown or cut requests are typed errors")
    func refused() {
        for bytes: [UInt8] in [[], [0x02], [0x0A, 0x00], [0x02, 0xEE], [0x02, 0x00, 0x00, 0x01, 0x82], [0x02, 0x00, 0x09, 0x01, 0x00]] {
            #expect(throws: PMDDecodingError.self, "\(bytes)") { try PMDControlPointRequest(bytes: bytes) }
        }
    }
}
