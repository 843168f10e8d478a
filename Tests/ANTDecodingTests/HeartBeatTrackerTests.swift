import ANTDecoding
import Testing

@Suite("RR intervals from beat count and beat time")
struct HeartBeatTrackerTests {
    @Test("an interval only when the count advances by exactly one")
    func advanceByOne() throws {
        var tracker = HeartBeatTracker()
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 1000, count: 10)).isEmpty)  // first page
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 1000, count: 10)).isEmpty)  // same beat again
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 1900, count: 11)) == [900])
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 1900, count: 11)).isEmpty)
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 3700, count: 13)).isEmpty)  // a beat missed
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 4600, count: 14)) == [900])  // back in step
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 5500, count: 13)).isEmpty)  // count went back
    }

    @Test("across the 256-beat count wrap")
    func countWrap() throws {
        var tracker = HeartBeatTracker()
        _ = tracker.rrIntervals(for: try heartRatePage(page: 0, time: 10_000, count: 254))
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 10_800, count: 255)) == [800])
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 11_600, count: 0)) == [800])
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 12_400, count: 1)) == [800])
    }

    @Test("across the 64 s beat-time wrap")
    func timeWrap() throws {
        var tracker = HeartBeatTracker()
        _ = tracker.rrIntervals(for: try heartRatePage(page: 0, time: 65_000, count: 40))
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 464, count: 41)) == [1000])  // 65536 + 464 − 65000
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 1464, count: 42)) == [1000])
    }

    @Test("across both wraps at once")
    func bothWraps() throws {
        var tracker = HeartBeatTracker()
        _ = tracker.rrIntervals(for: try heartRatePage(page: 0, time: 0xFF00, count: 255))
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 0x0200, count: 0)) == [0x300])
    }

    @Test("a zero-length interval is not a beat")
    func zeroInterval() throws {
        var tracker = HeartBeatTracker()
        _ = tracker.rrIntervals(for: try heartRatePage(page: 0, time: 500, count: 1))
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 500, count: 2)).isEmpty)
    }

    @Test("a trusted page 4 gives the interval from its own previous-beat time")
    func pageFour() throws {
        var tracker = HeartBeatTracker()
        _ = tracker.rrIntervals(for: try heartRatePage(page: 4, toggle: false, 0xFF, 0x00, 0x10, time: 0x1400, count: 1))
        // Count advanced by one: page 4's previous-beat time (0x1420) is used, not the last page's time.
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 4, toggle: true, 0xFF, 0x20, 0x14, time: 0x1800, count: 2)) == [0x3E0])
        #expect(tracker.pagesAreTrusted)
        // Two beats missed: page 4 still gives the last interval.
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 4, toggle: true, 0xFF, 0x00, 0x20, time: 0x2400, count: 5)) == [0x400])
        // Page 4's times wrap too.
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 4, toggle: false, 0xFF, 0x00, 0xFE, time: 0x0200, count: 6)) == [0x400])
        // A repeat of the beat gives nothing.
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 4, toggle: false, 0xFF, 0x00, 0xFE, time: 0x0200, count: 6)).isEmpty)
        // Other pages of a trusted strap fall back to the count rule.
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 2, toggle: true, 1, 2, 3, time: 0x0600, count: 7)) == [0x400])
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 2, toggle: true, 1, 2, 3, time: 0x0E00, count: 9)).isEmpty)
    }

    @Test("junk page bytes of a legacy strap never yield an interval nor change heart rate")
    func legacyStrap() throws {
        var tracker = HeartBeatTracker()
        // Byte 0 reads as page 4 with the toggle stuck; bytes 2–3 are junk.
        let pages = [
            try heartRatePage(page: 4, toggle: true, 0x12, 0x34, 0x56, time: 1000, count: 1, heartRate: 61),
            try heartRatePage(page: 4, toggle: true, 0x9A, 0xBC, 0xDE, time: 2000, count: 2, heartRate: 61),
            try heartRatePage(page: 4, toggle: true, 0x11, 0x22, 0x33, time: 4000, count: 4, heartRate: 61),
            try heartRatePage(page: 4, toggle: true, 0x44, 0x55, 0x66, time: 5000, count: 5, heartRate: 61),
        ]
        #expect(tracker.rrIntervals(for: pages[0]).isEmpty)
        #expect(tracker.rrIntervals(for: pages[1]) == [1000])  // from the count rule, not the junk
        #expect(tracker.rrIntervals(for: pages[2]).isEmpty)  // junk "page 4" does not bridge the missed beat
        #expect(tracker.rrIntervals(for: pages[3]) == [1000])
        #expect(!tracker.pagesAreTrusted)
        #expect(tracker.trustedDetail(of: pages[3]) == .none)
        #expect(pages.allSatisfy { $0.heartRate == 61 })
    }

    @Test("forgetting the last beat: the next page starts afresh")
    func forget() throws {
        var tracker = HeartBeatTracker()
        _ = tracker.rrIntervals(for: try heartRatePage(page: 0, time: 1000, count: 1))
        tracker.forgetLastBeat()
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 9000, count: 2)).isEmpty)
        #expect(tracker.rrIntervals(for: try heartRatePage(page: 0, time: 10_000, count: 3)) == [1000])
    }

    @Test("a real capture, bytes to RR: missed beats bridged by page 4, the time wrap crossed")
    func realCapture() throws {
        var decoder = ANTFrameDecoder()
        var tracker = HeartBeatTracker()
        var intervals: [UInt16] = []
        var heartRates: [UInt8] = []
        for message in decoder.feed(RealCapture.bytes) where message.id == ANTMessageID.broadcastData {
            let broadcast = try BroadcastData(message)
            #expect(broadcast.deviceNumber == 25170)
            let page = try HeartRatePage(broadcast)
            heartRates.append(page.heartRate)
            intervals += tracker.rrIntervals(for: page)
        }
        #expect(heartRates == [60, 60, 60, 60, 59, 59, 59, 59])
        // Beats 0xCB–0xCD: 1024 each. Beat 0xD0 after two missed: page 4 gives 0xFEC7 − 0xFAB6.
        // Beat 0xD1: 0x02D8 − 0xFEC7 across the wrap.
        #expect(intervals == [1024, 1024, 1024, 1041, 1041, 1041, 1041])
        #expect(tracker.pagesAreTrusted)
    }
}
