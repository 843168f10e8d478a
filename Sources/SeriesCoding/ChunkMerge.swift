/// UTC hours, the unit both stores chunk their samples by.
public enum UTCHour {
    /// One hour in microseconds.
    public static let microseconds: Int64 = 3_600_000_000

    /// The UTC hour `time` (microseconds since the epoch) falls in, rounded down, also before 1970.
    @inlinable @inline(__always)
    public static func of(_ time: Int64) -> Int64 {
        time >= 0 ? time / microseconds : (time &+ 1) / microseconds - 1
    }
}

/// A sample on its way out of a ``ChunkMerge``: where it starts, and what orders it among the
/// samples that start at the same microsecond (the local store's anchor, the central store's
/// row id).
public protocol MergedSample {
    /// Start, in microseconds since the epoch.
    var start: Int64 { get }
    /// Orders samples of the same start.
    var tieBreak: Int64 { get }
}

/// Merges the samples of chunks, read in order of their first starts (or in reverse), into one
/// stream ordered by (start, tie-break), as one table of rows would order them. Chunks of
/// different keys (sources, devices, gateways) overlap in time, so samples wait in a buffer until
/// no chunk still to come can precede them: in start order, until the next chunk starts after
/// them; newest first, until they lie past the UTC hour of the next chunk, which a chunk never
/// leaves. Both stores read their chunks through it.
public struct ChunkMerge<Item: MergedSample> {
    /// Whether the stream runs newest first.
    public let newestFirst: Bool
    @usableFromInline var buffer: [Item] = []
    @usableFromInline var head = 0

    public init(newestFirst: Bool) { self.newestFirst = newestFirst }

    /// Whether `a` comes before `b` in the stream.
    @inlinable @inline(__always)
    func precedes(_ a: Item, _ b: Item) -> Bool {
        newestFirst ? (a.start, a.tieBreak) > (b.start, b.tieBreak) : (a.start, a.tieBreak) < (b.start, b.tieBreak)
    }

    /// Hands `emit` the buffered samples that no chunk starting at `nextChunkStart` or beyond
    /// (nil: no chunk is left) can precede; stops early when `emit` returns false, and then
    /// returns false.
    @inlinable
    public mutating func drain(beforeChunkAt nextChunkStart: Int64?, _ emit: (Item) throws -> Bool) rethrows -> Bool {
        while head < buffer.count {
            let item = buffer[head]
            if let next = nextChunkStart {
                let final = newestFirst ? item.start >= (UTCHour.of(next) + 1) * UTCHour.microseconds : item.start < next
                guard final else { break }
            }
            head += 1
            guard try emit(item) else { return false }
        }
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        }
        return true
    }

    /// Adds samples already in the stream's order (one chunk's, say).
    @inlinable
    public mutating func add(ordered items: [Item]) {
        guard let first = items.first else { return }
        if head == buffer.count || precedes(buffer[buffer.count - 1], first) {
            buffer += items
            return
        }
        var merged: [Item] = []
        merged.reserveCapacity(buffer.count - head + items.count)
        var (i, j) = (head, 0)
        while i < buffer.count || j < items.count {
            if j == items.count || (i < buffer.count && precedes(buffer[i], items[j])) {
                merged.append(buffer[i])
                i += 1
            } else {
                merged.append(items[j])
                j += 1
            }
        }
        buffer = merged
        head = 0
    }

    /// Adds samples in any order.
    @inlinable
    public mutating func add(unordered items: [Item]) {
        add(ordered: items.sorted { precedes($0, $1) })
    }
}
