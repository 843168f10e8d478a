import HealthModel

/// A manager records the user's answer for a source and type: `share` or `read`,
/// `notDetermined`, `sharingDenied` or `sharingAuthorized`.
public struct SetAuthorization: HealthRequest {
    public static let name = "SetAuthorization"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant

    public var source: String
    public var type: String
    public var access: String
    public var status: String

    public init(_ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess) {
        self.source = source
        self.type = type.identifier
        self.access = access.rawValue
        self.status = status.description
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        let type = try SampleType.named(type)
        let access: AuthorizationAccess
        let status: AuthorizationStatus
        do {
            access = try AuthorizationAccess.parse(self.access)
            status = try AuthorizationStatus.parse(self.status)
        } catch {
            throw error.failure
        }
        guard SourceNames.isValid(source) else {
            throw .invalidArguments(
                "bad source \(source.quoted): it is 'hrmd', USER/APP with APP matching [a-z0-9][a-z0-9._-]{0,63}, or USER/flatpak:ID, USER/snap:NAME, USER/unit:NAME.service")
        }
        try await context.onStore { [source] store throws(HealthStoreError) in
            switch access {
            case .share: try store.setShareAuthorization(status, source: source, type: type)
            case .read: try store.setReadAuthorization(status, source: source, type: type)
            }
        }
        context.log(.notice, "set \(access.rawValue) authorization for \(type.identifier): \(status)", ["source": source])
        return NoResponse()
    }
}

/// The sources a manager may name.
public enum SourceNames {
    /// Whether `source` is the daemon's own, `USER/APP`, or `USER/KIND:NAME` (verified).
    public static func isValid(_ source: String) -> Bool {
        if source == HealthSource.daemonName { return true }
        guard let (user, app) = AppName.parts(of: source), !user.isEmpty, user.utf8.count <= 64 else { return false }
        return (try? AppName.validate(String(app))) != nil || VerifiedApp(applicationPart: app) != nil
    }
}
