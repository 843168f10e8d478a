import ANTDecoding
import TestSupport
import Testing

@Suite("ANT+ heart-rate data pages")
struct HeartRatePageTests {
    @Test("page 0: beat time, count and heart rate")
    func pageZero() throws {
        let page = try heartRatePage(page: 0, time: 0x1234, count: 7, heartRate: 72)
        #expect(page.pageNumber == 0 && !page.toggle)
        #expect(page.beatTime == 0x1234 && page.beatCount == 7 && page.heartRate == 72)
        #expect(page.detail == .none)
    }

    @Test("page 4 from a real strap: the previous beat's time")
    func pageFourReal() throws {
        let page = try HeartRatePage(try BroadcastData(try ANTMessage(frame: RealCapture.frames[0])))
        #expect(page.pageNumber == 4 && page.toggle)
        #expect(page.beatTime == 0xE6A5 && page.beatCount == 0xCA && page.heartRate == 60)
        #expect(page.detail == .previousBeat(0xE2A5))
    }

    @Test("page 1: cumulative operating time in 2 s units")
    func pageOne() throws {
        #expect(try heartRatePage(page: 1, 0x10, 0x00, 0x01, time: 0, count: 0).detail == .operatingTime(seconds: (0x01_0010) * 2))
    }

    @Test("page 2: manufacturer and the upper half of the serial number")
    func pageTwo() throws {
        #expect(try heartRatePage(page: 2, toggle: true, 1, 0x39, 0x30, time: 0, count: 0).detail == .manufacturer(id: 1, serialHigh: 12345))
    }

    @Test("page 3: hardware, software and model")
    func pageThree() throws {
        #expect(try heartRatePage(page: 3, 4, 5, 6, time: 0, count: 0).detail == .product(hardware: 4, software: 5, model: 6))
    }

    @Test("page 6: capabilities")
    func pageSix() throws {
        #expect(try heartRatePage(page: 6, 0xFF, 0x03, 0x01, time: 0, count: 0).detail == .capabilities(supported: 3, enabled: 1))
    }

    @Test("page 7: battery level, voltage and status")
    func pageSeven() throws {
        // 85 %, 3 + 128/256 V, status 3 (ok) in bits 4–6.
        #expect(try heartRatePage(page: 7, 85, 0x80, 0x33, time: 0, count: 0).detail == .battery(level: 85, voltage: 3.5, status: .ok))
        // Level not reported, coarse voltage invalid (0xF), status 7 (invalid).
        #expect(try heartRatePage(page: 7, 0xFF, 0x12, 0x7F, time: 0, count: 0).detail == .battery(level: nil, voltage: nil, status: .invalid))
        // Status 4 (low), 2 + 64/256 V; bit 7 of byte 3 is not part of the status.
        #expect(try heartRatePage(page: 7, 10, 0x40, 0xC2, time: 0, count: 0).detail == .battery(level: 10, voltage: 2.25, status: .low))
    }

    @Test("the toggle bit is not part of the page number")
    func toggleBit() throws {
        let page = try heartRatePage(page: 2, toggle: true, 1, 2, 3, time: 0, count: 0)
        #expect(page.pageNumber == 2 && page.toggle)
    }

    @Test("a page is 8 bytes")
    func length() {
        #expect(throws: ANTError.pageLength(7)) { try HeartRatePage(data: [0, 1, 2, 3, 4, 5, 6]) }
        #expect(throws: ANTError.pageLength(9)) { try HeartRatePage(data: [0, 1, 2, 3, 4, 5, 6, 7, 8]) }
        #expect(throws: ANTError.pageLength(0)) { try HeartRatePage(data: []) }
    }

    @Test("junk in bytes 0–3 never changes heart rate, beat time or beat count")
    func junkPageByte() throws {
        var generator = SplitMix64(seed: 5)
        for byte0 in UInt8.min...UInt8.max {
            let junk = (0..<3).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let page = try HeartRatePage(data: [byte0] + junk + [0x34, 0x12, 0x56, 0x4B])
            #expect(page.heartRate == 0x4B)
            #expect(page.beatTime == 0x1234)
            #expect(page.beatCount == 0x56)
            #expect(page.pageNumber == byte0 & 0x7F)
        }
    }
}

@Suite("Trusting page numbers: the toggle bit")
struct PageToggleDetectorTests {
    @Test("pages are trusted once the toggle has been seen both set and clear")
    func trust() throws {
        var detector = PageToggleDetector()
        let clear = try heartRatePage(page: 2, toggle: false, 1, 2, 3, time: 0, count: 0)
        let set = try heartRatePage(page: 2, toggle: true, 1, 2, 3, time: 0, count: 0)
        let afterFirst = detector.observe(clear)
        #expect(!afterFirst)
        #expect(detector.trustedDetail(of: clear) == .none)
        let afterRepeat = detector.observe(clear)
        #expect(!afterRepeat)
        let afterChange = detector.observe(set)
        #expect(afterChange)
        #expect(detector.trustedDetail(of: set) == .manufacturer(id: 1, serialHigh: 0x0302))
        let staysTrusted = [detector.observe(set), detector.observe(clear), detector.observe(clear)]
        #expect(staysTrusted == [true, true, true])
        #expect(detector.pagesAreTrusted)
    }

    @Test("a strap whose toggle never changes is never trusted")
    func legacy() throws {
        var detector = PageToggleDetector()
        for count in 0..<50 {
            let page = try heartRatePage(page: 4, toggle: true, 0, 0, 0, time: 0, count: UInt8(count))
            let trusted = detector.observe(page)
            #expect(!trusted)
        }
        #expect(!detector.pagesAreTrusted)
    }
}
