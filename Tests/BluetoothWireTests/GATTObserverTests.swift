import BluetoothWire
import Testing

@Suite struct GATTObserverTests {
    static let heartRate = GATTCharacteristic(declarationHandle: 0x0009, properties: .notify, valueHandle: 0x000A, uuid: .heartRateMeasurement)
    static let location = GATTCharacteristic(declarationHandle: 0x000C, properties: .read, valueHandle: 0x000D, uuid: .bodySensorLocation)
    static let vendor = GATTCharacteristic(
        declarationHandle: 0x001E, properties: .indicate, valueHandle: 0x001F,
        uuid: BluetoothUUID(littleEndian: (0..<16).map { UInt8($0) + 0x40 })!)

    /// A central's discovery, as a capture on the central shows it (`client` sends the requests).
    static func discover(_ observer: inout GATTObserver, client: LinkSide) -> [GATTObservation?] {
        let server = client.opposite
        return [
            observer.observe(.exchangeMTURequest(mtu: 247), from: client),
            observer.observe(.exchangeMTUResponse(mtu: 185), from: server),
            observer.observe(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService), from: client),
            observer.observe(.readByGroupTypeResponse([
                ATTGroupValue(handle: 0x0008, endGroup: 0x000D, value: [0x0D, 0x18]),
                ATTGroupValue(handle: 0x0019, endGroup: 0x001C, value: [0x0F, 0x18]),
            ]), from: server),
            observer.observe(.readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristicDeclaration), from: client),
            observer.observe(.readByTypeResponse([heartRate, location].map { ATTHandleValue(handle: $0.declarationHandle, value: $0.declarationValue) }), from: server),
            observer.observe(.readByTypeRequest(start: 0x000E, end: 0xFFFF, type: .characteristicDeclaration), from: client),
            observer.observe(.readByTypeResponse([ATTHandleValue(handle: vendor.declarationHandle, value: vendor.declarationValue)]), from: server),
            observer.observe(.readByTypeRequest(start: 0x0020, end: 0xFFFF, type: .characteristicDeclaration), from: client),
            observer.observe(.errorResponse(request: 0x08, handle: 0x0020, error: .attributeNotFound), from: server),
            observer.observe(.findInformationRequest(start: 0x000B, end: 0x000B), from: client),
            observer.observe(.findInformationResponse([ATTHandleUUID(handle: 0x000B, uuid: .clientCharacteristicConfiguration)]), from: server),
            observer.observe(.readRequest(handle: 0x000D), from: client),
            observer.observe(.readResponse(value: [0x01]), from: server),
            observer.observe(.handleValueNotification(handle: 0x000A, value: [0x00, 0x48]), from: server),
        ]
    }

    @Test("learns the server's table from a central's discovery, whichever end the capture was taken on", arguments: [LinkSide.local, .remote])
    func learnsFromDiscovery(_ client: LinkSide) {
        var observer = GATTObserver()
        let server = client.opposite
        let observations = Self.discover(&observer, client: client)
        #expect(observations.compactMap { $0 } == [
            .learned(handles: [0x0008, 0x0019], server: server),
            .learned(handles: [0x000A, 0x000D], server: server),
            .learned(handles: [0x001F], server: server),
            .learned(handles: [0x000B], server: server),
            .read([ATTHandleValue(handle: 0x000D, value: [0x01])], server: server),
            .notified(handle: 0x000A, value: [0x00, 0x48], server: server, indication: false),
        ])
        let table = observer.table(of: server)
        #expect(table.characteristicUUID(at: 0x000A) == .heartRateMeasurement)
        #expect(table.characteristicUUID(at: 0x000D) == .bodySensorLocation)
        #expect(table.characteristicUUID(at: 0x001F) == Self.vendor.uuid)
        #expect(table.characteristicUUID(at: 0x000B) == nil, "a descriptor holds no characteristic value")
        #expect(table.characteristicUUID(at: 0x0009) == nil, "nor does a declaration")
        #expect(table.valueHandles(of: .heartRateMeasurement) == [0x000A])
        #expect(table.services[0x0008]?.uuid == .heartRateService)
        #expect(observer.table(of: client).isEmpty)
    }

    @Test func findInformationAloneNamesValueHandles() {
        var observer = GATTObserver()
        _ = observer.observe(.findInformationRequest(start: 0x0008, end: 0x000B), from: .local)
        _ = observer.observe(.findInformationResponse([
            ATTHandleUUID(handle: 0x0008, uuid: .primaryService), ATTHandleUUID(handle: 0x0009, uuid: .characteristicDeclaration),
            ATTHandleUUID(handle: 0x000A, uuid: .heartRateMeasurement), ATTHandleUUID(handle: 0x000B, uuid: .clientCharacteristicConfiguration),
        ]), from: .remote)
        #expect(observer.table(of: .remote).valueHandles(of: .heartRateMeasurement) == [0x000A])
        #expect(observer.table(of: .remote).characteristicUUID(at: 0x0008) == nil)
    }

    @Test func aReadByTypeOfACharacteristicIsARead() {
        var observer = GATTObserver()
        _ = observer.observe(.readByTypeRequest(start: 1, end: 0xFFFF, type: .bodySensorLocation), from: .local)
        let observation = observer.observe(.readByTypeResponse([ATTHandleValue(handle: 0x000D, value: [0x02])]), from: .remote)
        #expect(observation == .read([ATTHandleValue(handle: 0x000D, value: [0x02])], server: .remote))
        #expect(observer.table(of: .remote).characteristicUUID(at: 0x000D) == .bodySensorLocation)
    }

    @Test func aResponseWithoutItsRequestTeachesNothing() {
        var observer = GATTObserver()
        // The capture began after the request.
        #expect(observer.observe(.readResponse(value: [0x01]), from: .remote) == nil)
        // A response to another request than the one outstanding.
        _ = observer.observe(.readRequest(handle: 0x000D), from: .local)
        #expect(observer.observe(.readByTypeResponse([ATTHandleValue(handle: 0x0009, value: Self.heartRate.declarationValue)]), from: .remote) == nil)
        // An error ends the outstanding request: a later response has nothing to answer.
        _ = observer.observe(.readRequest(handle: 0x000D), from: .local)
        #expect(observer.observe(.errorResponse(request: 0x0A, handle: 0x000D, error: .readNotPermitted), from: .remote) == nil)
        #expect(observer.observe(.readResponse(value: [0x01]), from: .remote) == nil)
        // A response from the end that asked is no answer.
        _ = observer.observe(.readRequest(handle: 0x000D), from: .local)
        #expect(observer.observe(.readResponse(value: [0x01]), from: .local) == nil)
        #expect(observer.servers.values.allSatisfy { $0.isEmpty })
    }

    @Test func bothEndsMayBeClientsAtOnce() {
        var observer = GATTObserver()
        _ = observer.observe(.readRequest(handle: 0x000D), from: .local)
        _ = observer.observe(.readRequest(handle: 0x0003), from: .remote)
        #expect(observer.observe(.readResponse(value: Array("phone".utf8)), from: .local) == .read([ATTHandleValue(handle: 0x0003, value: Array("phone".utf8))], server: .local))
        #expect(observer.observe(.readResponse(value: [0x01]), from: .remote) == .read([ATTHandleValue(handle: 0x000D, value: [0x01])], server: .remote))
        #expect(observer.observe(.handleValueIndication(handle: 0x0006, value: [1, 0, 0xFF, 0xFF]), from: .local)
            == .notified(handle: 0x0006, value: [1, 0, 0xFF, 0xFF], server: .local, indication: true))
    }
}
