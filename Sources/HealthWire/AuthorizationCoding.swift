import HealthRequests
import HealthModel
import SDBus
import Timestamps

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


extension AccessTokenRecord: WireCodable {
    /// `(id, source, manager, created, expires, revoked)`, times in microseconds, 0 for none.
    public static let wireSignature = "(ssbxxx)"

    public var wireValue: DBusValue {
        .structure([
            .string(id), .string(source), .bool(manager), .int64(created.microsecondsSinceEpoch),
            .int64(expires?.microsecondsSinceEpoch ?? 0), .int64(revoked?.microsecondsSinceEpoch ?? 0),
        ])
    }

    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> AccessTokenRecord {
        guard case .structure(let fields) = value.unwrapped, fields.count == 6, let id = fields[0].string, let source = fields[1].string,
              case .bool(let manager) = fields[2].unwrapped, case .int64(let created) = fields[3].unwrapped,
              case .int64(let expires) = fields[4].unwrapped, case .int64(let revoked) = fields[5].unwrapped
        else { throw WireError("an access token is not \(wireSignature)") }
        func time(_ micros: Int64) -> Timestamp? { micros == 0 ? nil : Timestamp(microsecondsSinceEpoch: micros) }
        return AccessTokenRecord(
            id: id, source: source, manager: manager, created: Timestamp(microsecondsSinceEpoch: created), expires: time(expires),
            revoked: time(revoked))
    }
}
