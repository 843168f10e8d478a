/// Whose samples of a type a reader sees: the store's one read rule, as in HealthKit. The
/// store's owner and a manager see every source's; a source with read authorization for the
/// type sees every source's; any other source only its own (a read denial is not an error and
/// is not revealed). Queries, the change feeds and the D-Bus change signals all ask this.
public enum ReadScope: Sendable, Hashable {
    /// Every source's samples.
    case everySource
    /// Only the samples this source saved.
    case ownOnly(String)

    /// What `reader` sees of a type: nil for the store's owner (no reader); `mayReadType`
    /// says whether the user granted the reader's source reading the type.
    public init(reader: String?, isManager: Bool = false, mayReadType: Bool) {
        guard let reader, !isManager, !mayReadType else {
            self = .everySource
            return
        }
        self = .ownOnly(reader)
    }

    /// What `reader` sees of `type`, given the sources granted reading each type.
    public init(reader: String, isManager: Bool, type: SampleType, readers: [SampleType: Set<String>]) {
        self.init(reader: reader, isManager: isManager, mayReadType: readers[type]?.contains(reader) == true)
    }

    /// Whether a sample saved by `source` is in the scope.
    public func admits(source: String) -> Bool {
        switch self {
        case .everySource: true
        case .ownOnly(let reader): source == reader
        }
    }

    /// The one source the reader is restricted to; nil when it sees every source.
    public var restrictedTo: String? {
        switch self {
        case .everySource: nil
        case .ownOnly(let reader): reader
        }
    }

    /// Whether `reader` may hear of sensor states (straps connecting, their battery): they
    /// tell of heart-rate straps, so a reader that sees every source's heart rate.
    public static func seesSensors(reader: String, isManager: Bool, readers: [SampleType: Set<String>]) -> Bool {
        ReadScope(reader: reader, isManager: isManager, type: .heartRate, readers: readers) == .everySource
    }
}
