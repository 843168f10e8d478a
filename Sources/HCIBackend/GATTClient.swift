import BluetoothWire
import Logging

/// The GATT procedures hrmd uses (Core spec Vol 3 Part G 4), over one ATT client: MTU
/// exchange, primary service, characteristic and descriptor discovery, reads (long values
/// continued with Read Blob) and writes.
struct GATTClient {
    let att: ATTClient
    let logger: Logger

    /// Asks for an ATT_MTU of `asking`; returns the one settled on. A server that refuses the
    /// exchange (Request Not Supported, or any other Error Response) leaves it at 23.
    func exchangeMTU(asking: Int) async throws(ATTClientError) -> Int {
        do {
            _ = try await att.request(.exchangeMTURequest(mtu: UInt16(clamping: asking)))
        } catch {
            guard case .errorResponse(_, _, let code) = error else { throw error }
            if code != .requestNotSupported { logger.info("ATT: MTU exchange refused: \(code); staying at \(att.mtu)") }
        }
        return att.mtu
    }

    /// Every primary service (Read By Group Type of 0x2800 over the whole handle range).
    /// Entries whose value is no UUID are skipped.
    func primaryServices() async throws(ATTClientError) -> [GATTService] {
        try await discover(0x0001...0xFFFF) {
            .readByGroupTypeRequest(start: $0.lowerBound, end: $0.upperBound, type: .primaryService)
        } entries: { response in
            guard case .readByGroupTypeResponse(let groups) = response else { return nil }
            return groups.map { group in (group.endGroup, GATTService(group)) }
        }
    }

    /// The characteristics declared in `service`, in handle order (Read By Type of 0x2803).
    func characteristics(of service: GATTService) async throws(ATTClientError) -> [GATTCharacteristic] {
        try await discover(service.start...service.end) {
            .readByTypeRequest(start: $0.lowerBound, end: $0.upperBound, type: .characteristicDeclaration)
        } entries: { response in
            guard case .readByTypeResponse(let declarations) = response else { return nil }
            return declarations.map { declaration in (declaration.handle, GATTCharacteristic(declaration: declaration)) }
        }
    }

    /// The attributes in `range` and their types (Find Information): a characteristic's descriptors.
    func descriptors(in range: ClosedRange<UInt16>) async throws(ATTClientError) -> [ATTHandleUUID] {
        try await discover(range) {
            .findInformationRequest(start: $0.lowerBound, end: $0.upperBound)
        } entries: { response in
            guard case .findInformationResponse(let entries) = response else { return nil }
            return entries.map { entry in (entry.handle, entry) }
        }
    }

    /// The value at `handle`, whole: a Read, then Read Blob from where it stopped while each
    /// part fills the ATT_MTU (values are at most 512 bytes). A server that will not go on
    /// (Attribute Not Long, Request Not Supported, any Error Response) leaves what was read.
    func read(_ handle: UInt16) async throws(ATTClientError) -> [UInt8] {
        let response = try await att.request(.readRequest(handle: handle))
        guard case .readResponse(var value) = response else { throw .unexpected(response) }
        var part = value
        while part.count == att.mtu - 1, value.count < Self.longestValue {
            let blob: ATTPDU
            do {
                blob = try await att.request(.readBlobRequest(handle: handle, offset: UInt16(value.count)))
            } catch {
                guard case .errorResponse = error else { throw error }
                break
            }
            guard case .other(ATTPDU.readBlobResponse, let parameters) = blob else { throw .unexpected(blob) }
            part = parameters
            value += part
        }
        return value
    }

    /// Writes `value` to `handle` with a Write Request.
    func write(_ value: [UInt8], to handle: UInt16) async throws(ATTClientError) {
        let response = try await att.request(.writeRequest(handle: handle, value: value))
        guard case .writeResponse = response else { throw .unexpected(response) }
    }

    /// The longest attribute value (Core spec Vol 3 Part F 3.2.9).
    static let longestValue = 512

    /// One discovery over `range`: each response lists entries in handle order with the last
    /// handle each covers; the next request starts after the last one, until the server says
    /// Attribute Not Found or the range is done. Entries that do not parse (nil) are skipped.
    private func discover<Entry>(
        _ range: ClosedRange<UInt16>, request: (ClosedRange<UInt16>) -> ATTPDU,
        entries: (ATTPDU) -> [(last: UInt16, entry: Entry?)]?
    ) async throws(ATTClientError) -> [Entry] {
        var found: [Entry] = []
        var start = range.lowerBound
        while true {
            let response: ATTPDU
            do {
                response = try await att.request(request(start...range.upperBound))
            } catch {
                if case .errorResponse(_, _, .attributeNotFound) = error { return found }
                throw error
            }
            guard let listed = entries(response) else { throw .unexpected(response) }
            let parsed = listed.compactMap(\.entry)
            if parsed.count < listed.count {
                logger.notice("ATT: skipped \(listed.count - parsed.count) malformed entries of a \(ATTOpcodeName.of(response.opcode))")
            }
            found += parsed
            guard let last = listed.map(\.last).max(), last >= start else {
                throw .malformed(.malformed(
                    what: ATTOpcodeName.of(response.opcode), reason: "it lists nothing from handle \(hexCode(start)) on"))
            }
            if last >= range.upperBound { return found }
            start = last + 1
        }
    }
}

extension ATTPDU {
    /// Read Blob Request (0x0C): part of a long value, from `offset`.
    static func readBlobRequest(handle: UInt16, offset: UInt16) -> ATTPDU {
        var parameters: [UInt8] = []
        for field in [handle, offset] {
            parameters += [UInt8(truncatingIfNeeded: field), UInt8(truncatingIfNeeded: field >> 8)]
        }
        return .other(opcode: 0x0C, parameters: parameters)
    }

    /// The opcode of Read Blob Response, which ``ATTPDU`` keeps as `.other`.
    static let readBlobResponse: UInt8 = 0x0D
}
