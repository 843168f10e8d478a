/// One end of a link, as seen from where a capture was taken.
public enum LinkSide: Sendable, Hashable, CustomStringConvertible {
    /// The host the capture was taken on.
    case local
    /// The device at the other end.
    case remote

    /// The other end.
    public var opposite: LinkSide { self == .local ? .remote : .local }

    public var description: String { self == .local ? "local" : "remote" }
}

/// What one ATT PDU of a link told a bystander.
public enum GATTObservation: Hashable, Sendable {
    /// Discovery named the type of these handles of `server`'s table.
    case learned(handles: [UInt16], server: LinkSide)
    /// Values read from `server`: a Read Response (with the handle its request named) or the
    /// entries of a Read By Type of a characteristic UUID.
    case read([ATTHandleValue], server: LinkSide)
    /// `server` notified (or indicated) the value of `handle`.
    case notified(handle: UInt16, value: [UInt8], server: LinkSide, indication: Bool)
}

/// Follows the ATT traffic of one link as a bystander (a capture), both ways: it pairs each
/// request with its response (one request is outstanding per client at a time) and learns
/// each server's attributes from the discovery it sees: Read By Group Type of primary and
/// secondary services, Read By Type of characteristic declarations (0x2803), Find
/// Information, and Read By Type of a characteristic UUID. Either end may be client and
/// server, and a capture may be taken on either; the sender of each PDU says which end
/// answered.
public struct GATTObserver: Sendable {
    /// The attribute tables of the link's servers as discovery showed them.
    public private(set) var servers: [LinkSide: GATTAttributeTable] = [:]
    /// The request each end sent that has not been answered yet.
    private var outstanding: [LinkSide: ATTPDU] = [:]

    public init() {}

    /// The table of `server`, empty until discovery shows something.
    public func table(of server: LinkSide) -> GATTAttributeTable { servers[server] ?? GATTAttributeTable() }

    /// Takes one PDU that `sender` sent; returns what it told, if anything.
    public mutating func observe(_ pdu: ATTPDU, from sender: LinkSide) -> GATTObservation? {
        switch pdu {
        case .handleValueNotification(let handle, let value):
            return .notified(handle: handle, value: value, server: sender, indication: false)
        case .handleValueIndication(let handle, let value):
            return .notified(handle: handle, value: value, server: sender, indication: true)
        default:
            break
        }
        if pdu.isRequest {
            outstanding[sender] = pdu
            return nil
        }
        guard let answered = pdu.answeredRequest, let request = outstanding[sender.opposite], request.opcode == answered else {
            return nil
        }
        outstanding[sender.opposite] = nil
        return learn(from: pdu, answering: request, server: sender)
    }

    private mutating func learn(from response: ATTPDU, answering request: ATTPDU, server: LinkSide) -> GATTObservation? {
        var table = servers[server] ?? GATTAttributeTable()
        defer { servers[server] = table }
        switch (request, response) {
        case (.readByGroupTypeRequest(_, _, let type), .readByGroupTypeResponse(let groups))
        where type == .primaryService || type == BluetoothUUID(0x2801):
            let services = groups.compactMap(GATTService.init)
            for service in services { table.add(service) }
            return .learned(handles: services.map(\.start), server: server)
        case (.readByTypeRequest(_, _, .characteristicDeclaration), .readByTypeResponse(let entries)):
            let characteristics = entries.compactMap { GATTCharacteristic(declaration: $0) }
            for characteristic in characteristics { table.add(characteristic) }
            return .learned(handles: characteristics.map(\.valueHandle), server: server)
        case (.readByTypeRequest(_, _, let type), .readByTypeResponse(let entries))
        where !GATTAttributeTable.isGATTDeclarationOrDescriptor(type):
            for entry in entries { table.setType(type, at: entry.handle) }
            return .read(entries, server: server)
        case (.findInformationRequest, .findInformationResponse(let entries)):
            for entry in entries { table.setType(entry.uuid, at: entry.handle) }
            return .learned(handles: entries.map(\.handle), server: server)
        case (.readRequest(let handle), .readResponse(let value)):
            return .read([ATTHandleValue(handle: handle, value: value)], server: server)
        default:
            return nil
        }
    }
}
