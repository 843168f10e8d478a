/// Which hrmd backend serves a device: the udev property `HRMD_SENSOR` names it.
public enum HotplugSensorKind: String, Sendable, Hashable, CaseIterable {
    /// An ANT USB stick (`HRMD_SENSOR=ant`, or a known Dynastream stick without the rules).
    case ant
    /// A serial heart-rate sensor speaking the line protocol (`HRMD_SENSOR=serial`).
    case serial

    /// How logs name one such device: "ANT stick", "serial sensor".
    public var deviceNoun: String {
        switch self {
        case .ant: "ANT stick"
        case .serial: "serial sensor"
        }
    }

    /// "an ANT stick", "a serial sensor".
    public var indefiniteNoun: String {
        switch self {
        case .ant: "an ANT stick"
        case .serial: "a serial sensor"
        }
    }
}

/// A tty hrmd can serve, as udev describes it: where it is, what it is, how fast it talks.
public struct HotplugDevice: Sendable, Hashable, CustomStringConvertible {
    /// The device node, such as `/dev/ttyUSB0`: the path the backend opens.
    public var devnode: String
    /// The sysfs path; add and remove events of one device share it.
    public var syspath: String
    public var kind: HotplugSensorKind
    /// USB vendor and model ids (`ID_VENDOR_ID`, `ID_MODEL_ID`), four hex digits, when known.
    public var vendorID: String?
    public var modelID: String?
    /// The USB serial number (`ID_SERIAL_SHORT`), when known.
    public var serial: String?
    /// The stable name the rules made (`/dev/hrmd/ant-ttyUSB0`), when there is one.
    public var symlink: String?
    /// The line speed: `HRMD_BAUD`, else the stick model's, else nil (the backend's default).
    public var baud: Int?

    public init(
        devnode: String, syspath: String, kind: HotplugSensorKind, vendorID: String? = nil, modelID: String? = nil,
        serial: String? = nil, symlink: String? = nil, baud: Int? = nil
    ) {
        self.devnode = devnode
        self.syspath = syspath
        self.kind = kind
        self.vendorID = vendorID
        self.modelID = modelID
        self.serial = serial
        self.symlink = symlink
        self.baud = baud
    }

    /// The device udev's properties describe, or nil when hrmd should not touch it: not a tty
    /// with a node, or neither marked `HRMD_SENSOR=ant|serial` nor a known ANT stick.
    /// `devlinks` are the device's symlinks (the `DEVLINKS` property is read when it is empty).
    public init?(syspath: String, devnode: String?, properties: [String: String], devlinks: [String] = []) {
        guard let devnode, !devnode.isEmpty else { return nil }
        if let subsystem = properties["SUBSYSTEM"], subsystem != "tty" { return nil }
        let vendor = properties["ID_VENDOR_ID"]?.lowercased()
        let model = properties["ID_MODEL_ID"]?.lowercased()
        let stick = ANTStickModel.known(vendorID: vendor, modelID: model)
        let kind: HotplugSensorKind
        switch properties["HRMD_SENSOR"] {
        case let marked? where !marked.isEmpty:
            guard let markedKind = HotplugSensorKind(rawValue: marked) else { return nil }
            kind = markedKind
        default:
            guard stick != nil else { return nil }
            kind = .ant
        }
        let links = devlinks.isEmpty
            ? (properties["DEVLINKS"] ?? "").split(separator: " ").map(String.init)
            : devlinks
        let stablePrefix = "/dev/hrmd/\(kind.rawValue)-"
        let explicitBaud = properties["HRMD_BAUD"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        self.init(
            devnode: devnode, syspath: syspath, kind: kind, vendorID: vendor, modelID: model,
            serial: properties["ID_SERIAL_SHORT"].flatMap { $0.isEmpty ? nil : $0 },
            symlink: links.first { $0.hasPrefix(stablePrefix) },
            baud: explicitBaud ?? (kind == .ant ? stick?.baud : nil))
    }

    /// For logs: `ANT stick /dev/ttyUSB0 (0fcf:1008, serial 123)`.
    public var description: String {
        var details: [String] = []
        if let vendorID, let modelID { details.append("\(vendorID):\(modelID)") }
        if let serial { details.append("serial \(serial)") }
        if let symlink { details.append(symlink) }
        let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        return "\(kind.deviceNoun) \(devnode)\(suffix)"
    }
}
