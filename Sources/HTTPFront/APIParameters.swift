import HealthModel
import HealthRequests
import Hummingbird
import Timestamps

/// A request's query parameters, read as a route declares them: each known name once, typed,
/// and an unknown name, a repeated one or a bad value a one-line 400.
struct APIParameters {
    private var values: [String: String] = [:]
    let now: Timestamp

    init(_ request: Request, known: [String], now: Timestamp = .now()) throws(RequestFailure) {
        self.now = now
        for (key, value) in request.uri.queryParameters {
            let name = String(key)
            guard known.contains(name) else {
                throw .invalidArguments(
                    known.isEmpty ? "this route takes no query parameters" : "unknown query parameter \(name.quoted) (known: \(known.joined(separator: ", ")))")
            }
            guard values[name] == nil else { throw .invalidArguments("the query parameter \(name.quoted) is given twice") }
            guard value.utf8.count <= RequestBudgets.stringArgumentBytes else {
                throw .invalidArguments("the query parameter \(name.quoted) is longer than \(RequestBudgets.stringArgumentBytes) bytes")
            }
            values[name] = String(value)
        }
    }

    func string(_ name: String) -> String? { values[name] }

    /// A type's name (default heart rate).
    func type(_ name: String = "type") -> String { values[name] ?? SampleType.heartRate.identifier }

    /// A time as users type it (RFC 3339 or an age such as `10m`); nil when absent.
    func time(_ name: String) throws(RequestFailure) -> Timestamp? {
        guard let text = values[name] else { return nil }
        guard let time = TimeExpression.parse(text, now: now) else {
            throw .invalidArguments("\(name) must be \(TimeExpression.expected), not \(text.quoted)")
        }
        return time
    }

    /// An anchor a previous answer gave (default 0: from the beginning).
    func anchor(_ name: String = "anchor") throws(RequestFailure) -> UInt64 {
        guard let text = values[name] else { return 0 }
        guard let anchor = UInt64(text) else { throw .invalidArguments("anchor must be a number a previous answer gave") }
        return anchor
    }

    func unsigned(_ name: String) throws(RequestFailure) -> UInt32? {
        guard let text = values[name] else { return nil }
        guard let value = UInt32(text) else { throw .invalidArguments("\(name) must be a whole number 0…\(UInt32.max), not \(text.quoted)") }
        return value
    }

    func number(_ name: String) throws(RequestFailure) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text), value.isFinite else { throw .invalidArguments("\(name) must be a number, not \(text.quoted)") }
        return value
    }
}
