/// Spots a BLE strap whose links keep ending at the same age, and names the known cause and
/// remedy. On Linux a strap whose L2CAP connection-parameter update the host rejects drops
/// the link about 30 s after connecting, every time; some Debian 12 systems drop it at 150 s.
/// Backoff alone would reconnect forever without saying why; this says so once.
///
/// A backend keeps one per strap and calls `linkEnded(after:)` for each link that streamed
/// and then ended on the strap's or the system's side, with the time from the first
/// notification (the `streaming` state) to the end. Links that hrmd ended itself (it is
/// stopping, the strap was removed from the configuration) are not the strap's doing and
/// must not be noted. Pure: ages come in, text comes out.
public struct LinkAgeDiagnosis: Sendable, Hashable {
    /// What manages the links, which decides where the remedy is applied.
    public enum Host: Sendable, Hashable {
        /// bluetoothd (the `ble` backend): its main.conf sets the kernel's limits.
        case bluetoothd
        /// The kernel alone (the `hci` backend): the adapter's limits are set in debugfs.
        case kernel
    }

    /// How many links in a row must end at a similar age (at least 2).
    public let minimumLinks: Int
    /// Links shorter than this are not noted at all: they are connects that failed at once,
    /// not links that lived and died.
    public let shortestLink: Duration
    /// Ages are similar when each lies within this of their median, or within 10 % of the
    /// median when that is more.
    public let tolerance: Duration
    /// Where the remedy the text names is applied.
    public let host: Host

    /// The diagnosis while it holds (the last `minimumLinks` links ended at a similar age),
    /// nil otherwise: the note for the strap's `hrmctl devices` row.
    public private(set) var current: String?

    /// The ages in seconds of the last links noted, oldest first, at most `minimumLinks`.
    private var recent: [Double] = []

    /// The share of the median age that ages may differ by when it is more than `tolerance`.
    static let relativeTolerance = 0.1
    /// Median ages that point at a rejected connection-parameter update: the strap asks for
    /// its parameters some seconds to half a minute into the link and gives up when refused.
    static let rejectedUpdateAges: ClosedRange<Double> = 20...40

    public init(minimumLinks: Int = 3, shortestLink: Duration = .seconds(5), tolerance: Duration = .seconds(3), host: Host = .bluetoothd) {
        self.host = host
        self.minimumLinks = max(minimumLinks, 2)
        self.shortestLink = shortestLink
        self.tolerance = tolerance
    }

    /// Notes one link that streamed for `age` and then ended. Returns the diagnosis the first
    /// time the last `minimumLinks` links ended at a similar age, nil otherwise (also while
    /// the diagnosis goes on holding). A link that breaks the pattern withdraws it (`current`
    /// becomes nil); it is given again once the pattern returns.
    @discardableResult
    public mutating func linkEnded(after age: Duration) -> String? {
        guard age >= shortestLink, age > .zero else { return nil }
        recent.append(age / .seconds(1))
        if recent.count > minimumLinks { recent.removeFirst(recent.count - minimumLinks) }
        guard recent.count == minimumLinks, let median = similarAge(of: recent) else {
            current = nil
            return nil
        }
        guard current == nil else { return nil }
        current = Self.text(age: median, links: minimumLinks, host: host)
        return current
    }

    /// The median of `ages` when every one of them lies close enough to it.
    private func similarAge(of ages: [Double]) -> Double? {
        let sorted = ages.sorted()
        let middle = sorted.count / 2
        let median = sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
        let allowed = max(tolerance / .seconds(1), median * Self.relativeTolerance)
        return sorted.allSatisfy { abs($0 - median) <= allowed } ? median : nil
    }

    /// One line: the age and count, the likely cause, the remedy.
    static func text(age: Double, links: Int, host: Host = .bluetoothd) -> String {
        let pattern = "the last \(links) links each ended about \(format(age)) after streaming began"
        let (settings, example, apply) = switch host {
        case .bluetoothd:
            (
                "[LE] MinConnectionInterval/MaxConnectionInterval in /etc/bluetooth/main.conf",
                "e.g. MinConnectionInterval=6, MaxConnectionInterval=400, ConnectionSupervisionTimeout=600", "restart bluetooth"
            )
        case .kernel:
            (
                "the adapter's LE connection-interval limits, which the kernel checks the strap's update against"
                    + " (/sys/kernel/debug/bluetooth/hciN/conn_min_interval and conn_max_interval, as root)",
                "e.g. 6 and 400, in units of 1.25 ms", "reconnect the strap"
            )
        }
        if rejectedUpdateAges.contains(age) {
            return "\(pattern): the strap's connection-parameter update is likely being rejected; widen \(settings)"
                + " to cover its request (btmon shows it; \(example)) and \(apply)"
        }
        return "\(pattern): something ends the link at a fixed age (a supervision timeout, or the 150 s drop known"
            + " on some Debian 12 systems); the known remedy is to widen \(settings) (\(example)) and \(apply)"
    }

    /// `30 s`, `150 s`; ages under 10 s to a tenth.
    private static func format(_ seconds: Double) -> String {
        seconds < 10 ? "\((seconds * 10).rounded() / 10) s" : "\(Int(seconds.rounded())) s"
    }
}
