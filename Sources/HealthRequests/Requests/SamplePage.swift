import HealthModel
import Timestamps

/// One page of the samples of a type starting in [since, until), oldest first, of one device
/// or of every device, as QuerySamples reads them; `next` continues after the page. Pages
/// never lose or repeat a sample, also among samples that start at the same time.
public struct SamplePage: HealthRequest {
    public static let name = "SamplePage"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(RequestBudgets.samplesPerQuery, of: "sample")

    public var app: String
    public var type: String
    public var since: Int64
    public var until: Int64
    /// At most this many (0: the most one request returns).
    public var limit: UInt32
    public var options: Options

    public struct Options: Codable, Sendable, Hashable {
        /// Only this device's samples (its local identifier).
        public var device: String?
        /// Where to continue: the `next` of the previous page.
        public var cursor: String?

        public init(device: String? = nil, cursor: String? = nil) {
            self.device = device
            self.cursor = cursor
        }
    }

    public init(app: String, type: SampleType, since: Timestamp?, until: Timestamp?, limit: Int, options: Options = Options()) {
        self.app = app
        self.type = type.identifier
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.limit = UInt32(clamping: limit)
        self.options = options
    }

    public struct Response: Codable, Sendable {
        public var samples: [SampleRecord]
        /// The cursor of the next page; empty when this page is the last.
        public var next: String

        public init(samples: [SampleRecord], next: String) {
            self.samples = samples
            self.next = next
        }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let range = try WireTime.checked(since: since, until: until)
        let limit = try RequestBudgets.queryLimit(limit)
        if let device = options.device, device.isEmpty || device.utf8.count > RequestBudgets.stringArgumentBytes {
            throw .invalidArguments("device must be a device's identifier of 1 to \(RequestBudgets.stringArgumentBytes) bytes")
        }
        let cursor = try options.cursor.map { text throws(RequestFailure) in try PageCursor(text) }
        var since = range.since
        if let cursor {
            if let lower = since, cursor.start < lower { throw .invalidArguments("the cursor is before the page's range") }
            since = cursor.start
        }
        let skip = cursor?.seen ?? 0
        let view = try await context.view(of: source)
        // One more than the page, to know whether another follows.
        let query = SampleQuery(type: type, since: since, until: range.until, device: options.device, limit: skip + limit + 1, reader: view.reader)
        let found = try await context.onStore { store throws(HealthStoreError) in try store.samples(query) }
        let page = Array(found.dropFirst(skip).prefix(limit))
        var next = ""
        if found.count > skip + limit, let last = page.last {
            // The samples up to the page's end that start when its last one does: what the
            // next page skips.
            let seen = found.prefix(skip + page.count).reversed().prefix { $0.sample.start == last.sample.start }.count
            next = PageCursor(start: last.sample.start, seen: seen).text
        }
        return Response(samples: page.map { view.record($0) }, next: next)
    }
}

/// Where a page ends: the start of its last sample, and how many samples starting then were
/// already given.
struct PageCursor: Hashable {
    var start: Timestamp
    var seen: Int

    init(start: Timestamp, seen: Int) {
        self.start = start
        self.seen = seen
    }

    /// `MICROSECONDS.SEEN`, as `text` wrote it; the time within the years a store holds (a
    /// forged cursor far outside them must not reach the store's time arithmetic).
    init(_ text: String) throws(RequestFailure) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 40, parts.count == 2, let micros = Int64(parts[0]), let seen = Int(parts[1]),
              (WireTime.earliest...WireTime.latest).contains(micros), seen >= 1, seen <= RequestBudgets.samplesPerQuery
        else { throw .invalidArguments("the cursor \(text.quoted) is not one a page gave") }
        start = Timestamp(microsecondsSinceEpoch: micros)
        self.seen = seen
    }

    var text: String { "\(start.microsecondsSinceEpoch).\(seen)" }
}
