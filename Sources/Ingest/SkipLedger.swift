import Logging
import SensorFrames

/// Counts skips per device and reason and logs them without flooding: the first skip of a
/// kind from a device is logged with its detail, the rest are summarized at most once per
/// `summaryInterval`, and everything still unreported at the end.
struct SkipLedger {
    struct Key: Hashable, Comparable {
        var device: SensorID
        var category: String
        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.device, lhs.category) < (rhs.device, rhs.category) }
    }

    private(set) var totals: [Key: Int] = [:]
    private var unreported: [Key: Int] = [:]
    private var lastSummary: ContinuousClock.Instant
    private let summaryInterval: Duration
    private let logger: Logger

    init(logger: Logger, summaryInterval: Duration = .seconds(60)) {
        self.logger = logger
        self.summaryInterval = summaryInterval
        self.lastSummary = .now
    }

    mutating func record(_ reason: SkipReason, device: SensorID) {
        let key = Key(device: device, category: reason.category)
        totals[key, default: 0] += 1
        if totals[key] == 1 {
            logger.warning(
                "skipped a frame: \(reason); further skips of this kind are summarized",
                metadata: ["device": "\(device)"])
        } else {
            unreported[key, default: 0] += 1
        }
    }

    /// Logs the summary when the interval has passed (or always, when `force`).
    mutating func summarize(force: Bool = false) {
        let now = ContinuousClock.now
        guard !unreported.isEmpty, force || now - lastSummary >= summaryInterval else { return }
        lastSummary = now
        for (key, count) in unreported.sorted(by: { $0.key < $1.key }) {
            logger.notice(
                "skipped \(count) more frame(s): \(key.category) (\(totals[key] ?? count) in all)",
                metadata: ["device": "\(key.device)"])
        }
        unreported.removeAll()
    }

    var totalCount: Int { totals.values.reduce(0, +) }
}
