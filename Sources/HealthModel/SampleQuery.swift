import Foundation
import HealthUnits
import Timestamps

/// Which samples to read: one type, a time range on the start, optional source and device.
public struct SampleQuery: Sendable, Hashable {
    public var type: SampleType
    /// Samples that start at or after this time.
    public var since: Timestamp?
    /// Samples that start before this time.
    public var until: Timestamp?
    /// Only this source's samples.
    public var source: String?
    /// Only the samples of devices with this local identifier, of every source the reader
    /// sees (each source has its own record of an identifier).
    public var device: String?
    public var limit: Int?
    /// Newest first instead of oldest first.
    public var newestFirst: Bool
    /// The source reading, when a program rather than the user reads: with read authorization
    /// for the type it sees every source's samples, without it only its own (combined with
    /// `source`, another source then gives nothing). nil reads as the store's owner (the
    /// user's own tools).
    public var reader: String?

    public init(
        type: SampleType, since: Timestamp? = nil, until: Timestamp? = nil, source: String? = nil,
        device: String? = nil, limit: Int? = nil, newestFirst: Bool = false, reader: String? = nil
    ) {
        self.type = type
        self.since = since
        self.until = until
        self.source = source
        self.device = device
        self.limit = limit
        self.newestFirst = newestFirst
        self.reader = reader
    }
}
