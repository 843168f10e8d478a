/// What was wrong with the ACL packets of one connection while frames were being put together.
public enum L2CAPReassemblyProblem: Hashable, Sendable, CustomStringConvertible {
    /// A continuation came with no frame started on that handle; it was dropped.
    case continuationWithoutStart(handle: UInt16)
    /// A new frame started before the previous one was complete; `missing` bytes of the old
    /// one never came and it was dropped.
    case unfinishedFrameDiscarded(handle: UInt16, missing: Int)
    /// The frame declared a length above the bound; it was dropped.
    case overlong(handle: UInt16, length: Int)
    /// More bytes came than the frame declared; the frame was dropped.
    case excess(handle: UInt16, declared: Int, received: Int)

    public var description: String {
        let link = { (handle: UInt16) in "connection \(hexCode(handle))" }
        return switch self {
        case .continuationWithoutStart(let handle): "\(link(handle)): an ACL continuation without a start was dropped"
        case .unfinishedFrameDiscarded(let handle, let missing):
            "\(link(handle)): an L2CAP frame missing \(missing) bytes was dropped when the next one started"
        case .overlong(let handle, let length): "\(link(handle)): an L2CAP frame of \(length) bytes is over the limit and was dropped"
        case .excess(let handle, let declared, let received):
            "\(link(handle)): an L2CAP frame declared \(declared) bytes but \(received) came; it was dropped"
        }
    }
}

/// Puts L2CAP frames back together from the ACL packets of each connection, in the order
/// they were carried. Pure and bounded: one partial frame per handle, none above
/// `maximumFrameLength`.
public struct L2CAPReassembler: Sendable {
    private struct Partial {
        var bytes: [UInt8]
        /// Known once the 4-byte basic header is in.
        var declaredLength: Int?
    }

    private let maximumFrameLength: Int
    private var partials: [UInt16: Partial] = [:]

    public init(maximumFrameLength: Int = 65_535) {
        self.maximumFrameLength = maximumFrameLength
    }

    /// Takes one ACL packet; returns the frame it completes, if any, and what it revealed was
    /// wrong, if anything.
    public mutating func append(_ packet: ACLPacket) -> (frame: L2CAPFrame?, problem: L2CAPReassemblyProblem?) {
        var problem: L2CAPReassemblyProblem?
        var partial: Partial
        if packet.boundary.startsFrame {
            if let unfinished = partials[packet.handle] {
                let missing = (unfinished.declaredLength.map { $0 + 4 } ?? 4) - unfinished.bytes.count
                problem = .unfinishedFrameDiscarded(handle: packet.handle, missing: missing)
            }
            partial = Partial(bytes: packet.payload)
        } else {
            guard let started = partials[packet.handle] else {
                return (nil, .continuationWithoutStart(handle: packet.handle))
            }
            partial = started
            partial.bytes += packet.payload
        }
        partials[packet.handle] = nil
        if partial.declaredLength == nil, partial.bytes.count >= 4 {
            let length = Int(partial.bytes[0]) | Int(partial.bytes[1]) << 8
            guard length <= maximumFrameLength else { return (nil, problem ?? .overlong(handle: packet.handle, length: length)) }
            partial.declaredLength = length
        }
        guard let length = partial.declaredLength, partial.bytes.count >= 4 + length else {
            partials[packet.handle] = partial
            return (nil, problem)
        }
        guard partial.bytes.count == 4 + length else {
            return (nil, problem ?? .excess(handle: packet.handle, declared: length, received: partial.bytes.count - 4))
        }
        let channel = UInt16(partial.bytes[2]) | UInt16(partial.bytes[3]) << 8
        return (L2CAPFrame(handle: packet.handle, channel: channel, payload: Array(partial.bytes[4...])), problem)
    }

    /// Forgets a partial frame of a connection that closed.
    public mutating func forget(handle: UInt16) {
        partials[handle] = nil
    }
}
