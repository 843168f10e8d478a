import HealthRequests
import HealthWire
import Testing

@Suite("Verified application names")
struct VerifiedAppTests {
    @Test("a source is verified when its application part names a label's kind")
    func verifiedSources() {
        for source in ["mary/flatpak:org.example.Pulse", "mary/snap:pulse", "root/unit:hrm-export.service", "uid-1001/snap:pulse_beta"] {
            #expect(VerifiedApp.isVerified(source: source), "\(source)")
        }
        for source in ["mary/myapp", "hrmd", "mary/flatpak:", "mary/flatpak:org", "mary/snap:", "mary/unit:cron.timer", "mary/other:x", "flatpak:org.a.B", ""] {
            #expect(!VerifiedApp.isVerified(source: source), "\(source)")
        }
    }

    @Test("no self-declared application name holds ':', so none reads as verified")
    func declaredNamesHaveNoColon() {
        for name in ["flatpak:org.example.pulse", "snap:pulse", "unit:cron.service", "a:b", ":"] {
            #expect((try? AppName.validate(name)) == nil, "\(name)")
        }
        #expect((try? AppName.validate("myapp")) != nil)
    }

    @Test("KIND:NAME round-trips")
    func roundTrip() {
        let app = VerifiedApp(kind: .unit, name: "getty@tty1.service")
        #expect(app?.description == "unit:getty@tty1.service")
        #expect(VerifiedApp(applicationPart: "unit:getty@tty1.service") == app)
    }
}
