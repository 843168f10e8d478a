import HealthModel
import HealthStore
import HealthWire
import SDBus
import Timestamps

/// The arguments of one call, read in order with their types checked (the vtable already
/// checked the signature; this turns values into the store's types with one-line reasons).
struct CallArguments {
    private let values: [DBusValue]
    private var index = 0

    init(_ values: [DBusValue]) { self.values = values }

    private mutating func next(_ what: String) throws(ServiceFailure) -> DBusValue {
        guard index < values.count else { throw .invalidArguments("missing argument \(index + 1) (\(what))") }
        defer { index += 1 }
        return values[index]
    }

    /// A string argument, at most `HealthBusLimits.stringArgumentBytes` long (no name,
    /// identifier or zone the service knows is longer).
    mutating func string(_ what: String) throws(ServiceFailure) -> String {
        guard case .string(let text) = try next(what) else { throw .invalidArguments("\(what) must be a string") }
        return try Self.bounded(text, what)
    }

    mutating func strings(_ what: String) throws(ServiceFailure) -> [String] {
        guard let elements = try next(what).elements else { throw .invalidArguments("\(what) must be a string array") }
        return try elements.map { element throws(ServiceFailure) in
            guard case .string(let text) = element else { throw .invalidArguments("\(what) must be a string array") }
            return try Self.bounded(text, what)
        }
    }

    private static func bounded(_ text: String, _ what: String) throws(ServiceFailure) -> String {
        guard text.utf8.count <= HealthBusLimits.stringArgumentBytes else {
            throw .invalidArguments("\(what) \(text.quoted) is over \(HealthBusLimits.stringArgumentBytes) bytes")
        }
        return text
    }

    mutating func int64(_ what: String) throws(ServiceFailure) -> Int64 {
        guard case .int64(let number) = try next(what) else { throw .invalidArguments("\(what) must be an int64 (x)") }
        return number
    }

    mutating func uint64(_ what: String) throws(ServiceFailure) -> UInt64 {
        guard case .uint64(let number) = try next(what) else { throw .invalidArguments("\(what) must be a uint64 (t)") }
        return number
    }

    mutating func uint32(_ what: String) throws(ServiceFailure) -> UInt32 {
        guard case .uint32(let number) = try next(what) else { throw .invalidArguments("\(what) must be a uint32 (u)") }
        return number
    }

    mutating func double(_ what: String) throws(ServiceFailure) -> Double {
        guard case .double(let number) = try next(what) else { throw .invalidArguments("\(what) must be a double (d)") }
        return number
    }

    mutating func fileDescriptor(_ what: String) throws(ServiceFailure) -> DBusFileDescriptor {
        guard let descriptor = try next(what).fileDescriptor else { throw .invalidArguments("\(what) must be a file descriptor (h)") }
        return descriptor
    }

    mutating func array(_ what: String) throws(ServiceFailure) -> [DBusValue] {
        guard let elements = try next(what).elements else { throw .invalidArguments("\(what) must be an array") }
        return elements
    }

    mutating func dictionary(_ what: String) throws(ServiceFailure) -> WireDictionary {
        let value = try next(what)
        do { return try WireDictionary(value, context: what) } catch { throw error.failure }
    }

    /// A sample type by its public name.
    mutating func sampleType() throws(ServiceFailure) -> SampleType {
        let name = try string("type")
        return try Self.sampleType(named: name)
    }

    static func sampleType(named name: String) throws(ServiceFailure) -> SampleType {
        do { return try SampleType.parse(name) } catch { throw error.failure }
    }

    /// The range [since, until) of the next two arguments.
    mutating func range() throws(ServiceFailure) -> (since: Timestamp?, until: Timestamp?) {
        let since = try int64("since")
        let until = try int64("until")
        do { return try WireTime.range(since: since, until: until) } catch { throw error.failure }
    }

    /// A result limit: 0 means the most a call returns; more than that is refused.
    mutating func limit(maximum: Int) throws(ServiceFailure) -> Int {
        let asked = Int(try uint32("limit"))
        guard asked <= maximum else {
            throw .invalidArguments(
                "limit \(asked) is over the most one call returns (\(maximum)); page with the range or the anchor, or use QuerySamplesToFile")
        }
        return asked == 0 ? maximum : asked
    }
}
