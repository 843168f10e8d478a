/// Answers remembered per unique bus name (`:1.42`), the oldest forgotten first past
/// `capacity`. Unique names are never reused on a bus, so an answer never goes stale: what a
/// service learns once about a caller's connection (its uid, its application) holds for as
/// long as the connection does.
public struct UniqueNameCache<Value> {
    public let capacity: Int
    private var values: [String: Value] = [:]
    private var order: [String] = []

    public init(capacity: Int) { self.capacity = capacity }

    public subscript(name: String) -> Value? { values[name] }

    /// Remembers `value` for `name` (a name already known keeps its first answer).
    public mutating func insert(_ value: Value, for name: String) {
        guard values.index(forKey: name) == nil else { return }
        values[name] = value
        order.append(name)
        if order.count > capacity { values[order.removeFirst()] = nil }
    }

    /// Forgets `name` (its connection left the bus).
    public mutating func remove(_ name: String) {
        guard values.removeValue(forKey: name) != nil else { return }
        order.removeAll { $0 == name }
    }
}
