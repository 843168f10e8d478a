import SensorBackend
import Testing

@Suite("Links that end at the same age")
struct LinkAgeDiagnosisTests {
    /// Feeds links of these ages (seconds) and returns what each one returned.
    private func feed(_ ages: [Double], into diagnosis: inout LinkAgeDiagnosis) -> [String?] {
        ages.map { diagnosis.linkEnded(after: .milliseconds(Int64($0 * 1000))) }
    }

    /// What the last link fed returned.
    private func said(_ results: [String?]) -> String? { results.last ?? nil }

    @Test("three links ending at about 30 s: said once, naming the age, the count, the rejected update and the remedy")
    func thirtySecondsIsARejectedUpdate() throws {
        var diagnosis = LinkAgeDiagnosis()
        let said = feed([29.4, 31.0, 30.2], into: &diagnosis)
        #expect(said[0] == nil && said[1] == nil)
        let text = try #require(said[2])
        #expect(diagnosis.current == text)
        #expect(text.hasPrefix("the last 3 links each ended about 30 s after streaming began"))
        #expect(text.contains("connection-parameter update is likely being rejected"))
        #expect(text.contains("[LE] MinConnectionInterval/MaxConnectionInterval in /etc/bluetooth/main.conf"))
        #expect(text.contains("MaxConnectionInterval=400") && text.contains("ConnectionSupervisionTimeout=600"))
        #expect(!text.contains("\n"), "one line")
        #expect(!text.contains("Debian"))
    }

    @Test("another fixed age gets the general text, with the 150 s drop some Debian 12 systems show")
    func otherAgesAreGeneral() throws {
        var diagnosis = LinkAgeDiagnosis()
        let text = try #require(said(feed([148, 151, 150.4], into: &diagnosis)))
        #expect(text.hasPrefix("the last 3 links each ended about 150 s after streaming began: something ends the link at a fixed age"))
        #expect(text.contains("150 s drop known on some Debian 12 systems"))
        #expect(text.contains("/etc/bluetooth/main.conf"))
        #expect(!text.contains("rejected"))
    }

    @Test("without bluetoothd the remedy is the kernel's limits, not main.conf")
    func kernelRemedy() throws {
        var diagnosis = LinkAgeDiagnosis(host: .kernel)
        let text = try #require(said(feed([30, 31, 29.5], into: &diagnosis)))
        #expect(text.contains("connection-parameter update is likely being rejected"))
        #expect(text.contains("/sys/kernel/debug/bluetooth/hciN/conn_min_interval and conn_max_interval"))
        #expect(!text.contains("main.conf"))
        #expect(!text.contains("\n"), "one line")
    }

    @Test("while it goes on holding it is not said again; the text stays the same")
    func saidOnce() throws {
        var diagnosis = LinkAgeDiagnosis()
        let first = try #require(said(feed([30, 30, 30], into: &diagnosis)))
        #expect(feed([31, 29, 30.5, 30], into: &diagnosis) == [nil, nil, nil, nil])
        #expect(diagnosis.current == first)
    }

    @Test("a link that breaks the pattern withdraws it; it is said again once the pattern returns")
    func withdrawnAndGivenAgain() throws {
        var diagnosis = LinkAgeDiagnosis()
        #expect(said(feed([30, 30, 30], into: &diagnosis)) != nil)
        #expect(feed([600], into: &diagnosis) == [nil])
        #expect(diagnosis.current == nil)
        #expect(feed([30, 30], into: &diagnosis) == [nil, nil], "the long link is still among the last three")
        let again = try #require(said(feed([30], into: &diagnosis)))
        #expect(again.contains("about 30 s"))
        #expect(diagnosis.current == again)
    }

    @Test("fewer links than the minimum say nothing")
    func tooFewLinks() {
        var diagnosis = LinkAgeDiagnosis(minimumLinks: 4)
        #expect(feed([30, 30, 30], into: &diagnosis) == [nil, nil, nil])
        #expect(diagnosis.current == nil)
        #expect(said(feed([30], into: &diagnosis))?.hasPrefix("the last 4 links") == true)
    }

    @Test("links shorter than the shortest link (failed connects) are not noted: they neither count nor break the pattern")
    func shortLinksAreIgnored() {
        var diagnosis = LinkAgeDiagnosis()
        #expect(feed([1, 2, 0.5, 4.9], into: &diagnosis).allSatisfy { $0 == nil })
        #expect(diagnosis.current == nil)
        #expect(said(feed([30, 2, 30, 0, 30], into: &diagnosis)) != nil)
        #expect(feed([1], into: &diagnosis) == [nil])
        #expect(diagnosis.current != nil, "a failed connect does not withdraw it")
        var zero = LinkAgeDiagnosis(shortestLink: .zero)
        #expect(feed([0, 0, 0, -1], into: &zero).allSatisfy { $0 == nil }, "no age is no link")
    }

    @Test("similar is within 3 s of the median, or 10 % of it when that is more")
    func tolerance() {
        func diagnosed(_ ages: [Double]) -> Bool {
            var diagnosis = LinkAgeDiagnosis()
            return said(feed(ages, into: &diagnosis)) != nil
        }
        #expect(diagnosed([10, 12.9, 7.1]))
        #expect(!diagnosed([10, 13.2, 10]))
        #expect(diagnosed([150, 135, 165]))
        #expect(!diagnosed([150, 131, 150]))
        #expect(!diagnosed([30, 60, 90]))
        #expect(!diagnosed([100, 150, 200]))
    }

    @Test("an even count uses the middle two for the median; a minimum below two is two")
    func evenCountAndClamping() {
        var pairs = LinkAgeDiagnosis(minimumLinks: 2)
        #expect(said(feed([40, 46], into: &pairs))?.contains("about 43 s") == true)
        var one = LinkAgeDiagnosis(minimumLinks: 1)
        #expect(one.minimumLinks == 2)
        #expect(feed([30], into: &one) == [nil], "one link is no pattern")
        #expect(said(feed([30], into: &one))?.hasPrefix("the last 2 links") == true)
    }

    @Test("short ages (for tests) are shown to a tenth of a second")
    func shortAges() {
        var diagnosis = LinkAgeDiagnosis(shortestLink: .milliseconds(100))
        let text = said(feed([1.2, 1.3, 1.25], into: &diagnosis))
        #expect(text?.contains("about 1.3 s after streaming began") == true, "\(text ?? "nil")")
    }
}
