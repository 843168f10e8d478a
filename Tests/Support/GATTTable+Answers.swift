import BluetoothWire

extension GATTTable {
    /// What a GATT server with this table answers `request` at ATT_MTU `mtu`; writes are stored.
    /// Lists hold as many entries of the first entry's length as fit the MTU.
    public mutating func answer(_ request: ATTPDU, mtu: Int) -> ATTPDU {
        func refuse(_ handle: UInt16, _ error: ATTErrorCode) -> ATTPDU {
            .errorResponse(request: request.opcode, handle: handle, error: error)
        }
        switch request {
        case .readByGroupTypeRequest(let start, let end, let type):
            guard start >= 1, start <= end else { return refuse(start, .invalidHandle) }
            guard type == .primaryService else { return refuse(start, .unsupportedGroupType) }
            let starts = attributes.filter { $0.type == .primaryService }.map(\.handle)
            let groups = starts.enumerated().filter { (start...end).contains($0.element) }.map { index, handle in
                let groupEnd = index + 1 < starts.count ? starts[index + 1] - 1 : UInt16(attributes.count)
                return ATTGroupValue(handle: handle, endGroup: groupEnd, value: attributes[Int(handle) - 1].value)
            }
            let fitting = Self.fit(groups, mtu: mtu) { 4 + $0.value.count }
            return fitting.isEmpty ? refuse(start, .attributeNotFound) : .readByGroupTypeResponse(fitting)
        case .readByTypeRequest(let start, let end, let type):
            guard start >= 1, start <= end else { return refuse(start, .invalidHandle) }
            let found = attributes.filter { (start...end).contains($0.handle) && $0.type == type }
            if let refused = found.first, let refusal = refused.refusal { return refuse(refused.handle, refusal) }
            let values = found.map { ATTHandleValue(handle: $0.handle, value: Array($0.value.prefix(min(mtu - 4, 253)))) }
            let fitting = Self.fit(values, mtu: mtu) { 2 + $0.value.count }
            return fitting.isEmpty ? refuse(start, .attributeNotFound) : .readByTypeResponse(fitting)
        case .findInformationRequest(let start, let end):
            guard start >= 1, start <= end else { return refuse(start, .invalidHandle) }
            let found = attributes.filter { (start...end).contains($0.handle) }.map { ATTHandleUUID(handle: $0.handle, uuid: $0.type) }
            let fitting = Self.fit(found, mtu: mtu) { 2 + $0.uuid.littleEndian.count }
            return fitting.isEmpty ? refuse(start, .attributeNotFound) : .findInformationResponse(fitting)
        case .readRequest(let handle):
            guard let attribute = attribute(handle) else { return refuse(handle, .invalidHandle) }
            if let refusal = attribute.refusal { return refuse(handle, refusal) }
            return .readResponse(value: Array(attribute.value.prefix(mtu - 1)))
        case .other(0x0C, let parameters) where parameters.count == 4:
            let handle = UInt16(parameters[0]) | UInt16(parameters[1]) << 8
            let offset = Int(parameters[2]) | Int(parameters[3]) << 8
            guard let attribute = attribute(handle) else { return refuse(handle, .invalidHandle) }
            if let refusal = attribute.refusal { return refuse(handle, refusal) }
            guard attribute.value.count > mtu - 1 else { return refuse(handle, .attributeNotLong) }
            guard offset <= attribute.value.count else { return refuse(handle, .invalidOffset) }
            return .other(opcode: 0x0D, parameters: Array(attribute.value[offset...].prefix(mtu - 1)))
        case .writeRequest(let handle, let value):
            guard let attribute = attribute(handle) else { return refuse(handle, .invalidHandle) }
            if let refusal = attribute.refusal { return refuse(handle, refusal) }
            store(value, at: handle)
            return .writeResponse
        default:
            return refuse(0, .requestNotSupported)
        }
    }

    /// The first entries of `entries` of the first one's size, as many as fit a response of
    /// ATT_MTU `mtu` (opcode and length byte first).
    private static func fit<Entry>(_ entries: [Entry], mtu: Int, size: (Entry) -> Int) -> [Entry] {
        guard let first = entries.first else { return [] }
        let length = size(first)
        let alike = entries.prefix { size($0) == length }
        return Array(alike.prefix(max(1, (mtu - 2) / length)))
    }
}
