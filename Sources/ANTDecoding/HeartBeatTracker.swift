/// Turns one strap's successive pages into RR intervals (1/1024 s).
///
/// A page completes a beat when its beat count differs from the previous page's:
/// - a trusted page 4 gives the interval itself, its beat time minus the previous beat's
///   time (16-bit, wrapping), even when messages were missed in between;
/// - otherwise the interval is the 16-bit (wrapping) difference of the two pages' beat times,
///   and only when the count advanced by exactly one (mod 256): after a missed beat the
///   difference spans two intervals and is not an RR.
///
/// The first page, repeats of a beat, and zero-length intervals give nothing. Whether page 4
/// is trusted is decided by a ``PageToggleDetector`` the tracker keeps, so a legacy strap's
/// junk page byte never yields an interval. Use one tracker per strap, and call
/// ``forgetLastBeat()`` when its messages stop for a while (so a count that happens to have
/// advanced by one across the gap is not read as one beat).
public struct HeartBeatTracker: Sendable {
    private var last: (count: UInt8, time: UInt16)?
    private var toggle = PageToggleDetector()

    /// A tracker that has seen no page.
    public init() {}

    /// Whether this strap's page numbers (and bytes 1–3) are trusted: see ``PageToggleDetector``.
    public var pagesAreTrusted: Bool { toggle.pagesAreTrusted }

    /// `page.detail` once this strap's pages are trusted, ``HeartRatePage/Detail/none`` before.
    /// Ask after ``rrIntervals(for:)`` has seen the page.
    public func trustedDetail(of page: HeartRatePage) -> HeartRatePage.Detail {
        toggle.trustedDetail(of: page)
    }

    /// Returns the RR intervals (1/1024 s) this page completes, oldest first.
    public mutating func rrIntervals(for page: HeartRatePage) -> [UInt16] {
        let trusted = toggle.observe(page)
        defer { last = (page.beatCount, page.beatTime) }
        guard let last, page.beatCount != last.count else { return [] }
        let interval: UInt16
        if trusted, case .previousBeat(let previous) = page.detail {
            interval = page.beatTime &- previous
        } else if page.beatCount &- last.count == 1 {
            interval = page.beatTime &- last.time
        } else {
            return []
        }
        return interval == 0 ? [] : [interval]
    }

    /// Forgets the last beat (not whether pages are trusted): the next page starts afresh.
    public mutating func forgetLastBeat() {
        last = nil
    }
}
