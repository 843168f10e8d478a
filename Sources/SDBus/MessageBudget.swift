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

/// What a decode found over its budget: the first bound it crossed.
public struct DBusBudgetExceeded: Error, Sendable, Hashable, CustomStringConvertible {
    /// `values` or `string bytes`.
    public var bound: String
    public var limit: Int

    public var description: String { "the message holds more than \(limit) \(bound), the most this service decodes" }
}

/// Counts what a decode has taken against its budget (one decode, on one thread).
final class DecodeAllowance {
    private var valuesLeft: Int
    private var stringBytesLeft: Int
    private let budget: DBusDecodeBudget
    /// The bound crossed, once one was.
    private(set) var exceeded: DBusBudgetExceeded?

    /// Unix file descriptors taken (each an open descriptor while the call waits).
    private(set) var descriptors = 0

    /// Takes a Unix file descriptor (and the value it is).
    func takeDescriptor() -> Bool {
        guard takeValue() else { return false }
        descriptors += 1
        return true
    }

    /// About what the values taken so far occupy once decoded (each a heap allocation of
    /// some 64 bytes, and the strings' bytes).
    var decodedBytes: Int {
        (budget.values - max(valuesLeft, 0)) * 64 + (budget.stringBytes - max(stringBytesLeft, 0))
    }

    init(_ budget: DBusDecodeBudget) {
        self.budget = budget
        valuesLeft = budget.values
        stringBytesLeft = budget.stringBytes
    }

    /// Takes one value; false (and `exceeded` set) once the budget is spent.
    func takeValue() -> Bool { takeValues(1) }

    /// Takes `count` values at once (a byte array read in one piece).
    func takeValues(_ count: Int) -> Bool {
        guard exceeded == nil else { return false }
        guard count <= valuesLeft else {
            exceeded = DBusBudgetExceeded(bound: "values", limit: budget.values)
            return false
        }
        valuesLeft -= count
        return true
    }

    /// Takes a string of `count` bytes (and the value it is).
    func takeString(_ count: Int) -> Bool {
        guard takeValue() else { return false }
        guard count <= stringBytesLeft else {
            exceeded = DBusBudgetExceeded(bound: "string bytes", limit: budget.stringBytes)
            return false
        }
        stringBytesLeft -= count
        return true
    }
}

/// D-Bus marshalling's alignment: what ``MessageWriter`` counts a body's size with.
enum WireSize {
    /// The alignment of a value of the type `signature` starts with.
    static func alignment(of signature: Substring) -> Int {
        switch signature.first {
        case "n", "q": 2
        case "b", "i", "u", "h", "s", "o", "a": 4
        case "x", "t", "d", "(", "{": 8
        default: 1  // y, g, v
        }
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
