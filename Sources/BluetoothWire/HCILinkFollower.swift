/// One link of a capture: a connection handle on a controller (monitor captures can hold
/// several controllers, whose handles overlap).
public struct LinkID: Hashable, Sendable, CustomStringConvertible {
    /// The controller index, or nil for a capture of one controller.
    public var controller: UInt16?
    public var handle: UInt16

    public init(controller: UInt16? = nil, handle: UInt16) {
        self.controller = controller
        self.handle = handle
    }

    /// `connection 0x0040`, with `on hci1` for a capture of several controllers.
    public var description: String {
        let text = "connection " + hexCode(handle)
        return controller.map { text + " on hci\($0)" } ?? text
    }
}

/// What the host interface said about a link.
public enum LinkEvent: Hashable, Sendable {
    /// An LE connection came up (successful LE Connection Complete or Enhanced Connection Complete).
    case connected(LinkID, LEConnectionComplete)
    /// The link closed (successful Disconnection Complete), with the HCI reason.
    case disconnected(LinkID, reason: UInt8)
    /// A whole ATT PDU (L2CAP channel 4), and which end sent it.
    case att(LinkID, ATTPDU, from: LinkSide)
}

/// What could not be followed.
public enum LinkProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// An HCI event that does not decode.
    case badEvent(BluetoothWireError)
    /// An ACL packet that does not decode.
    case badACLPacket(BluetoothWireError)
    /// ACL packets of a link that do not add up to L2CAP frames.
    case reassembly(LinkID, L2CAPReassemblyProblem)
    /// An L2CAP frame on the ATT channel that is no ATT PDU.
    case badATTPDU(LinkID, BluetoothWireError)
    /// An ACL packet the capturing tool cut short; the L2CAP frame it belonged to is lost.
    case cutACLPacket(LinkID)

    public var description: String {
        switch self {
        case .badEvent(let error): "\(error)"
        case .badACLPacket(let error): "\(error)"
        case .reassembly(let link, let problem):
            link.controller == nil ? "\(problem)" : "\(problem) on hci\(link.controller ?? 0)"
        case .badATTPDU(let link, let error): "\(link): \(error)"
        case .cutACLPacket(let link): "\(link): an ACL packet cut short by the capturing tool; its L2CAP frame is lost"
        }
    }
}

/// Follows the links of a capture through the host interface: LE connections by their
/// complete events, ACL packets put back together into L2CAP frames per link and direction,
/// and the ATT PDUs of channel 4. Pure: feed it the packets in capture order.
///
/// A link that was open before the capture began is followed from its first ACL packet; its
/// leading continuations (the rest of a frame that started before the capture) are dropped
/// quietly. Once a link is seen from a frame's start, an ACL packet that does not fit is a
/// problem.
public struct HCILinkFollower: Sendable {
    /// One direction of one link.
    private struct DirectedLink: Hashable {
        var link: LinkID
        var sender: LinkSide
    }

    /// The directions followed from a frame boundary, each with its frame being put together.
    private var reassemblers: [DirectedLink: L2CAPReassembler] = [:]

    public init() {}

    /// What `packet` (from `controller`, nil for single-controller captures) told, and what
    /// it revealed was wrong. `bytesLeftOut` is what the capturing tool left out of it.
    public mutating func follow(_ packet: BTSnoopPacket, controller: UInt16? = nil, bytesLeftOut: Int = 0)
        -> (event: LinkEvent?, problem: LinkProblem?)
    {
        switch packet {
        case .event(let bytes):
            guard bytesLeftOut == 0 else { return (nil, nil) }
            return follow(event: bytes, controller: controller)
        case .aclSent(let bytes):
            return follow(acl: bytes, sender: .local, controller: controller, cut: bytesLeftOut > 0)
        case .aclReceived(let bytes):
            return follow(acl: bytes, sender: .remote, controller: controller, cut: bytesLeftOut > 0)
        case .command, .controllerAdded, .controllerRemoved, .note, .other:
            return (nil, nil)
        }
    }

    private mutating func follow(event bytes: [UInt8], controller: UInt16?) -> (event: LinkEvent?, problem: LinkProblem?) {
        let event: HCIEvent
        do {
            event = try HCIEvent(decoding: bytes)
        } catch {
            return (nil, .badEvent(error))
        }
        switch event {
        case .leConnectionComplete(let complete) where complete.status == 0:
            let link = LinkID(controller: controller, handle: complete.handle)
            for sender in [LinkSide.local, .remote] { reassemblers[DirectedLink(link: link, sender: sender)] = L2CAPReassembler() }
            return (.connected(link, complete), nil)
        case .disconnectionComplete(let status, let handle, let reason) where status == 0:
            let link = LinkID(controller: controller, handle: handle)
            forget(link)
            return (.disconnected(link, reason: reason), nil)
        default:
            return (nil, nil)
        }
    }

    private mutating func follow(acl bytes: [UInt8], sender: LinkSide, controller: UInt16?, cut: Bool)
        -> (event: LinkEvent?, problem: LinkProblem?)
    {
        if cut {
            // Only the header is sure to be there: the frame this packet belongs to is lost.
            guard bytes.count >= 2 else { return (nil, nil) }
            let link = LinkID(controller: controller, handle: (UInt16(bytes[0]) | UInt16(bytes[1]) << 8) & 0x0FFF)
            reassemblers[DirectedLink(link: link, sender: sender)] = nil
            return (nil, .cutACLPacket(link))
        }
        let packet: ACLPacket
        do {
            packet = try ACLPacket(decoding: bytes)
        } catch {
            return (nil, .badACLPacket(error))
        }
        let link = LinkID(controller: controller, handle: packet.handle)
        let directed = DirectedLink(link: link, sender: sender)
        guard packet.boundary.startsFrame || reassemblers[directed] != nil else { return (nil, nil) }
        let (frame, reassemblyProblem) = reassemblers[directed, default: L2CAPReassembler()].append(packet)
        let problem = reassemblyProblem.map { LinkProblem.reassembly(link, $0) }
        guard let frame, frame.channel == L2CAPFrame.attChannel else { return (nil, problem) }
        do {
            return (.att(link, try ATTPDU(decoding: frame.payload), from: sender), problem)
        } catch {
            return (nil, problem ?? .badATTPDU(link, error))
        }
    }

    private mutating func forget(_ link: LinkID) {
        for sender in [LinkSide.local, .remote] { reassemblers[DirectedLink(link: link, sender: sender)] = nil }
    }
}
