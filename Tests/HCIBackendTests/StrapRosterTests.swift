import BluetoothWire
@testable import HCIBackend
import Testing

@Suite("Which straps are admitted, and when to scan")
struct AdmissionTests {
    @Test("listed addresses are admitted whatever they advertise; others only with any-strap and the Heart Rate service")
    func admission() {
        let listed = StrapAdmission(listed: [Straps.polar], anyStrap: false)
        #expect(listed.admits(Straps.report(Straps.polar, Straps.otherData)))
        #expect(!listed.admits(Straps.report(Straps.garmin)))
        let any = StrapAdmission(listed: [], anyStrap: true)
        #expect(any.admits(Straps.report(Straps.garmin)))
        #expect(!any.admits(Straps.report(Straps.kettle, Straps.otherData)))
        #expect(StrapAdmission(listed: [], anyStrap: false).admitsNothing)
        #expect(!listed.admitsNothing && !any.admitsNothing)
        #expect(StrapAdmission.nothingAdmitted.contains("--sensor ble:AA:BB:CC:DD:EE:FF") && StrapAdmission.nothingAdmitted.contains("--any-strap"))
    }

    @Test("scan while a strap is searched for, hold while one connects, idle once all are linked")
    func demand() {
        #expect(ScanDemand(phases: [.searching, .linked], anyStrap: false) == .scan)
        #expect(ScanDemand(phases: [.searching, .connecting], anyStrap: false) == .holdForConnection)
        #expect(ScanDemand(phases: [.linked, .resting], anyStrap: false) == .idle)
        #expect(ScanDemand(phases: [], anyStrap: false) == .idle)
    }

    @Test("with any-strap, scan until one strap is linked")
    func anyStrapDemand() {
        #expect(ScanDemand(phases: [], anyStrap: true) == .scan)
        #expect(ScanDemand(phases: [.resting], anyStrap: true) == .scan)
        #expect(ScanDemand(phases: [.linked, .resting], anyStrap: true) == .idle)
    }
}

@Suite("The roster of one adapter lifetime", .timeLimit(.minutes(1)))
struct StrapRosterTests {
    @Test("a listed strap's sightings reach its connection, with the address type and the name")
    func listed() async {
        let roster = StrapRoster(admission: StrapAdmission(listed: [Straps.polar], anyStrap: false))
        let followed = roster.followListed()
        #expect(followed.map(\.0) == [Straps.polar])
        guard case .followed = roster.heard(Straps.report(Straps.polar)) else {
            Issue.record("not followed")
            return
        }
        var sightings = followed[0].1.makeAsyncIterator()
        let sighting = await sightings.next()
        #expect(sighting?.address == Straps.polar && sighting?.addressType == .random && sighting?.name == "Polar H10 0001")
    }

    @Test("the newest sighting is kept while the connection is busy; a name heard once stays")
    func newest() async {
        let roster = StrapRoster(admission: StrapAdmission(listed: [Straps.polar], anyStrap: false))
        let followed = roster.followListed()
        _ = roster.heard(Straps.report(Straps.polar, type: .public))
        _ = roster.heard(Straps.report(Straps.polar, Straps.otherData, type: .random))
        var sightings = followed[0].1.makeAsyncIterator()
        let sighting = await sightings.next()
        #expect(sighting?.addressType == .random && sighting?.name == "Polar H10 0001")
    }

    @Test("with any-strap a new heart-rate strap is admitted once; a refused one is reported once; others are ignored")
    func hearing() {
        let any = StrapRoster(admission: StrapAdmission(listed: [], anyStrap: true))
        guard case .admitted(Straps.garmin, _) = any.heard(Straps.report(Straps.garmin)) else {
            Issue.record("not admitted")
            return
        }
        guard case .followed = any.heard(Straps.report(Straps.garmin)) else {
            Issue.record("admitted twice")
            return
        }
        guard case .ignored = any.heard(Straps.report(Straps.kettle, Straps.otherData)) else {
            Issue.record("a kettle admitted")
            return
        }

        let listed = StrapRoster(admission: StrapAdmission(listed: [Straps.polar], anyStrap: false))
        guard case .refused(Straps.neighbour, "Polar H10 0001") = listed.heard(Straps.report(Straps.neighbour)) else {
            Issue.record("the neighbour's strap not refused")
            return
        }
        guard case .ignored = listed.heard(Straps.report(Straps.neighbour)) else {
            Issue.record("refused twice")
            return
        }
    }

    @Test("phases decide scanning; links are found by handle until unlinked")
    func phasesAndLinks() {
        let roster = StrapRoster(admission: StrapAdmission(listed: [Straps.polar, Straps.garmin], anyStrap: false))
        _ = roster.followListed()
        #expect(roster.scanDemand == .scan)
        roster.setPhase(.connecting, of: Straps.polar)
        #expect(roster.scanDemand == .holdForConnection)
        roster.setPhase(.linked, of: Straps.polar)
        roster.setPhase(.linked, of: Straps.garmin)
        #expect(roster.scanDemand == .idle)
        roster.link(0x40, to: Straps.polar)
        #expect(roster.address(of: 0x40) == Straps.polar)
        roster.unlink(0x40)
        #expect(roster.address(of: 0x40) == nil)
    }

    @Test("the end of the lifetime finishes every strap's sightings")
    func end() async {
        let roster = StrapRoster(admission: StrapAdmission(listed: [Straps.polar], anyStrap: false))
        let followed = roster.followListed()
        roster.end()
        var sightings = followed[0].1.makeAsyncIterator()
        #expect(await sightings.next() == nil)
        #expect(roster.isEmpty)
    }
}
