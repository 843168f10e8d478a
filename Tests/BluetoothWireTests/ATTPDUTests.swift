import BluetoothWire
import Testing

@Suite struct ATTPDUTests {
    static let roundTrips: [ATTPDU] = [
        .errorResponse(request: 0x10, handle: 0x0020, error: .attributeNotFound),
        .exchangeMTURequest(mtu: 517),
        .exchangeMTUResponse(mtu: 232),
        .findInformationRequest(start: 0x0012, end: 0x0013),
        .findInformationResponse([ATTHandleUUID(handle: 0x0012, uuid: BluetoothUUID(0x2902))]),
        .findInformationResponse([ATTHandleUUID(handle: 0x0030, uuid: BluetoothUUID(littleEndian: Array(0..<16))!)]),
        .readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristicDeclaration),
        .readByTypeResponse([
            ATTHandleValue(handle: 0x0010, value: [0x10, 0x11, 0x00, 0x37, 0x2A]),
            ATTHandleValue(handle: 0x0013, value: [0x02, 0x14, 0x00, 0x38, 0x2A]),
        ]),
        .readRequest(handle: 0x0014),
        .readResponse(value: [0x01]),
        .readResponse(value: []),
        .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService),
        .readByGroupTypeResponse([
            ATTGroupValue(handle: 0x0001, endGroup: 0x0009, value: [0x00, 0x18]),
            ATTGroupValue(handle: 0x000E, endGroup: 0x0015, value: [0x0D, 0x18]),
        ]),
        .writeRequest(handle: 0x0012, value: [0x01, 0x00]),
        .writeResponse,
        .handleValueNotification(handle: 0x0011, value: [0x10, 0x48, 0x2C, 0x03]),
        .handleValueIndication(handle: 0x0003, value: [0x01, 0x00, 0xFF, 0xFF]),
        .handleValueConfirmation,
        .writeCommand(handle: 0x0012, value: [0x01, 0x00]),
        .other(opcode: 0x16, parameters: [0x01, 0x02]),
    ]

    @Test(arguments: roundTrips) func decodesWhatItEncodes(_ pdu: ATTPDU) throws {
        #expect(try ATTPDU(decoding: pdu.encoded) == pdu)
    }

    @Test func readsDiscoveryResponsesAsStrapsSendThem() throws {
        // Read By Group Type Response: three services of 6 bytes each.
        let services = try ATTPDU(decoding: [0x11, 0x06, 0x01, 0x00, 0x09, 0x00, 0x00, 0x18, 0x0A, 0x00, 0x0D, 0x00, 0x0D, 0x18, 0x0E, 0x00, 0x16, 0x00, 0x0A, 0x18])
        guard case .readByGroupTypeResponse(let groups) = services else { Issue.record("\(services)"); return }
        #expect(groups.compactMap(GATTService.init).map(\.uuid) == [BluetoothUUID(0x1800), .heartRateService, .deviceInformationService])
        #expect(groups.compactMap(GATTService.init).map(\.end) == [0x0009, 0x000D, 0x0016])

        // Read By Type Response of characteristic declarations: notify 2a37 at 0x000C, read 2a38 at 0x000F.
        let declarations = try ATTPDU(decoding: [0x09, 0x07, 0x0B, 0x00, 0x10, 0x0C, 0x00, 0x37, 0x2A, 0x0E, 0x00, 0x02, 0x0F, 0x00, 0x38, 0x2A])
        guard case .readByTypeResponse(let entries) = declarations else { Issue.record("\(declarations)"); return }
        let characteristics = entries.compactMap(GATTCharacteristic.init(declaration:))
        #expect(characteristics.map(\.uuid) == [.heartRateMeasurement, .bodySensorLocation])
        #expect(characteristics.map(\.valueHandle) == [0x000C, 0x000F])
        #expect(characteristics[0].properties == .notify)
        #expect(characteristics[1].properties == .read)
        #expect(characteristics[0].declarationValue == entries[0].value)
    }

    @Test func saysWhatIsWrongWithBadPDUs() {
        let bad: [[UInt8]] = [
            [],  // nothing at all
            [0x01, 0x10, 0x20],  // error response cut short
            [0x03, 0x17],  // MTU response cut short
            [0x03, 0x17, 0x00, 0x00],  // MTU response with a byte too many
            [0x05, 0x03, 0x12, 0x00, 0x02, 0x29],  // find information: unknown format
            [0x05, 0x01, 0x12, 0x00, 0x02],  // find information: a partial entry
            [0x05, 0x01],  // find information: no entries
            [0x09, 0x01, 0x0B, 0x00],  // read by type: entries shorter than a handle
            [0x09, 0x07, 0x0B, 0x00, 0x10, 0x0C, 0x00, 0x37],  // read by type: a partial entry
            [0x11, 0x06, 0x01, 0x00, 0x09, 0x00, 0x00],  // read by group type: a partial entry
            [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x00],  // read by group type request: a 3-byte UUID
            [0x1B, 0x11],  // notification without a whole handle
        ]
        for bytes in bad {
            #expect(throws: BluetoothWireError.self, "\(bytes)") { try ATTPDU(decoding: bytes) }
        }
    }

    @Test func knowsRequestsAndWhatAnswersThem() {
        #expect(ATTPDU.readRequest(handle: 1).isRequest)
        #expect(ATTPDU.exchangeMTURequest(mtu: 23).isRequest)
        #expect(!ATTPDU.writeCommand(handle: 1, value: []).isRequest)
        #expect(!ATTPDU.handleValueNotification(handle: 1, value: []).isRequest)
        #expect(ATTPDU.readResponse(value: []).answeredRequest == ATTPDU.Opcode.readRequest)
        #expect(ATTPDU.readByGroupTypeResponse([]).answeredRequest == ATTPDU.Opcode.readByGroupTypeRequest)
        #expect(ATTPDU.writeResponse.answeredRequest == ATTPDU.Opcode.writeRequest)
        #expect(ATTPDU.errorResponse(request: 0x08, handle: 1, error: .attributeNotFound).answeredRequest == 0x08)
        #expect(ATTPDU.handleValueNotification(handle: 1, value: []).answeredRequest == nil)
        #expect(ATTPDU.handleValueConfirmation.answeredRequest == nil)
    }

    @Test func namesErrorCodes() {
        #expect(ATTErrorCode.attributeNotFound.description == "Attribute Not Found (0x0a)")
        #expect(ATTErrorCode.insufficientAuthentication.description == "Insufficient Authentication (0x05)")
        #expect(ATTErrorCode(rawValue: 0x85).description == "application error (0x85)")
        #expect(ATTErrorCode(rawValue: 0x42).description == "error 0x42")
    }
}

@Suite struct BluetoothUUIDTests {
    @Test func foldsTheBaseUUIDToItsAlias() throws {
        let long: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x0D, 0x18, 0x00, 0x00]
        let uuid = try #require(BluetoothUUID(littleEndian: long))
        #expect(uuid == .heartRateService)
        #expect(uuid.short == 0x180D)
        #expect(uuid.littleEndian == [0x0D, 0x18])
        #expect(uuid.description == "180d")
    }

    @Test func keepsOtherUUIDsWhole() throws {
        // Nordic UART service, 6e400001-b5a3-f393-e0a9-e50e24dcca9e, as ATT carries it.
        let wire: [UInt8] = [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E]
        let uuid = try #require(BluetoothUUID(littleEndian: wire))
        #expect(uuid.short == nil)
        #expect(uuid.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(uuid.littleEndian == wire)
        #expect(BluetoothUUID(littleEndian: [1, 2, 3]) == nil)
    }
}
