/// How much of a received message is turned into Swift values: a message is decoded only
/// while it stays within these bounds, so a caller's 32 MiB message costs the service no more
/// than the bus already spent delivering it (sd-bus holds the received bytes either way; each
/// decoded value is a heap allocation of its own, about 20 times the bytes it came from).
public struct DBusDecodeBudget: Sendable, Hashable {
    /// Values of any type, containers and their elements each counting one.
    public var values: Int
    /// Bytes of all strings, object paths and signatures together.
    public var stringBytes: Int

    public init(values: Int, stringBytes: Int) {
        self.values = values
        self.stringBytes = stringBytes
    }

    /// No bound: for replies and signals from peers the program chose to talk to.
    public static let unlimited = DBusDecodeBudget(values: .max, stringBytes: .max)
}

/// What a message was found to hold past its budget, read (`values`, `string bytes`) or
/// written (`bytes`): the first bound it crossed.
public struct DBusBudgetExceeded: Error, Sendable, Hashable, CustomStringConvertible {
    /// `values`, `string bytes` or `bytes`.
    public var bound: String
    public var limit: Int

    public var description: String { "the message holds more than \(limit) \(bound), the most this service decodes" }
}

/// Counts what a decode has taken against its budget (one decode, on one thread); a take
/// past the budget throws `DBusError.overBudget`.
final class DecodeAllowance {
    private let budget: DBusDecodeBudget
    private var values = 0
    private var stringBytes = 0
    /// Unix file descriptors taken (each an open descriptor while the call waits).
    private(set) var descriptors = 0

    init(_ budget: DBusDecodeBudget) { self.budget = budget }

    /// About what the values taken occupy once decoded (each a heap allocation of some 64
    /// bytes, and the strings' bytes).
    var decodedBytes: Int { values * 64 + stringBytes }

    /// Takes the value a message holds next, of D-Bus type `type`; strings, object paths and
    /// signatures are taken with their bytes (``takeString(_:)``), once their length is known.
    func take(_ type: CChar) throws(DBusError) {
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"): return
        case UInt8(ascii: "h"):
            try takeValues(1)
            descriptors += 1
        default: try takeValues(1)
        }
    }

    /// Takes `count` values at once (a byte array read in one piece).
    func takeValues(_ count: Int) throws(DBusError) {
        guard count <= budget.values - values else { throw .overBudget(DBusBudgetExceeded(bound: "values", limit: budget.values)) }
        values += count
    }

    /// Takes a string of `count` bytes (and the value it is).
    func takeString(_ count: Int) throws(DBusError) {
        try takeValues(1)
        guard count <= budget.stringBytes - stringBytes else {
            throw .overBudget(DBusBudgetExceeded(bound: "string bytes", limit: budget.stringBytes))
        }
        stringBytes += count
    }
}

/// Shortens an error message to at most `maximum` bytes of UTF-8, on a character boundary,
/// marking the cut: an error reply quotes what went wrong, never a caller's whole input.
func boundedErrorText(_ text: String, maximum: Int = DBusCallLimits.errorMessageBytes) -> String {
    guard text.utf8.count > maximum else { return text }
    var kept = ""
    var size = 0
    for character in text {
        let width = character.utf8.count
        if size + width > maximum - 3 { break }
        kept.append(character)
        size += width
    }
    return kept + "…"
}
