import HealthRequests
import HealthModel
import SDBus

extension AuthorizationAccessEntry {
    /// `(source, type, access, status)`.
    public static let wireSignature = "(ssss)"

    public var wireValue: DBusValue {
        .structure([.string(source), .string(type.identifier), .string(access.rawValue), .string(status.description)])
    }

    public init(wire value: DBusValue) throws(WireError) {
        guard case .structure(let fields) = value.unwrapped, fields.count == 4,
              let source = fields[0].string, let typeName = fields[1].string, let accessName = fields[2].string,
              let statusName = fields[3].string
        else { throw WireError("an authorization entry is not \(Self.wireSignature)") }
        let type = try SampleType.parse(typeName)
        guard let access = AuthorizationAccess(rawValue: accessName) else { throw WireError("unknown access \(accessName.quoted)") }
        self.init(source: source, type: type, access: access, status: try AuthorizationStatus.parse(statusName))
    }
}

