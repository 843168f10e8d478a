/// The ANT USB sticks hrmd knows, by USB ids, with the line speed each one needs.
public struct ANTStickModel: Sendable, Hashable {
    public var vendorID: String
    public var modelID: String
    public var name: String
    /// The serial line speed. The old stick (a USB–serial bridge) really runs at it; the
    /// USB-native ones ignore it, and 115200 is what their drivers expect.
    public var baud: Int

    public init(vendorID: String, modelID: String, name: String, baud: Int) {
        self.vendorID = vendorID
        self.modelID = modelID
        self.name = name
        self.baud = baud
    }

    /// Dynastream Innovations' USB vendor id.
    public static let dynastreamVendorID = "0fcf"

    /// Every known stick: ANTUSB2, ANTUSB-m and the old ANT USB stick.
    public static let all: [ANTStickModel] = [
        ANTStickModel(vendorID: dynastreamVendorID, modelID: "1008", name: "ANTUSB2 Stick", baud: 115_200),
        ANTStickModel(vendorID: dynastreamVendorID, modelID: "1009", name: "ANTUSB-m Stick", baud: 115_200),
        ANTStickModel(vendorID: dynastreamVendorID, modelID: "1004", name: "ANT USB Stick (first generation)", baud: 115_200),
    ]

    /// The known stick with these ids (case-insensitive hex), or nil.
    public static func known(vendorID: String?, modelID: String?) -> ANTStickModel? {
        guard let vendorID = vendorID?.lowercased(), let modelID = modelID?.lowercased() else { return nil }
        return all.first { $0.vendorID == vendorID && $0.modelID == modelID }
    }
}
