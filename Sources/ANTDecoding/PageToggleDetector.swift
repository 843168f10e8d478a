/// Tells a paged ANT+ heart-rate strap from a legacy one.
///
/// Legacy straps send one undocumented format with junk in bytes 0–3; paged straps flip
/// the page-change toggle (byte 0 bit 7) every 4 messages. As the ANT+ profile asks, page
/// numbers and bytes 1–3 are trusted only once the toggle has been seen both set and clear;
/// from then on (for this strap) they stay trusted. Use one detector per strap.
public struct PageToggleDetector: Sendable, Hashable {
    private var firstToggle: Bool?
    /// Whether the toggle bit has been seen to change, so page numbers and bytes 1–3 mean
    /// what the profile says.
    public private(set) var pagesAreTrusted = false

    /// A detector that has seen no page.
    public init() {}

    /// Notes `page`'s toggle bit; returns whether pages are now trusted (this page included).
    @discardableResult
    public mutating func observe(_ page: HeartRatePage) -> Bool {
        if !pagesAreTrusted {
            if let firstToggle {
                pagesAreTrusted = firstToggle != page.toggle
            } else {
                firstToggle = page.toggle
            }
        }
        return pagesAreTrusted
    }

    /// `page.detail` once pages are trusted, ``HeartRatePage/Detail/none`` before.
    public func trustedDetail(of page: HeartRatePage) -> HeartRatePage.Detail {
        pagesAreTrusted ? page.detail : .none
    }
}
