import HealthRequests
import Foundation
@testable import HealthService
import HealthWire
import Testing

/// The labels a caller cannot choose, read from the texts Linux keeps them in, as Flatpak,
/// AppArmor (snapd's profiles) and systemd write them.
@Suite("Application labels")
struct AppLabelsTests {
    // MARK: Flatpak

    /// `/.flatpak-info` as `flatpak run` (1.14) writes it for an application.
    static let flatpakInfo = """
        [Application]
        name=org.example.Pulse
        runtime=runtime/org.freedesktop.Platform/x86_64/23.08

        [Instance]
        instance-id=2894633270
        instance-path=/home/mary/.var/app/org.example.Pulse
        app-path=/var/lib/flatpak/app/org.example.Pulse/x86_64/stable/5d1b2a7c0e3f/files
        app-commit=5d1b2a7c0e3f4a9b8c6d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b
        app-extensions=
        runtime-path=/var/lib/flatpak/runtime/org.freedesktop.Platform/x86_64/23.08/0c8f5e4d3b2a/files
        runtime-commit=0c8f5e4d3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170
        runtime-extensions=org.freedesktop.Platform.GL.default=9f8e7d6c5b4a
        branch=stable
        arch=x86_64
        flatpak-version=1.14.4
        session-bus-proxy=true
        system-bus-proxy=true

        [Context]
        shared=network;ipc;
        sockets=x11;wayland;pulseaudio;system-bus;
        devices=dri;

        [Session Bus Policy]
        org.freedesktop.Notifications=talk

        """

    @Test("a Flatpak application's id comes from [Application] name=")
    func flatpakApplication() {
        #expect(AppLabels.flatpakApp(fromInfo: Self.flatpakInfo)?.description == "flatpak:org.example.Pulse")
        #expect(AppLabels.flatpakApp(fromInfo: "# written by flatpak\n[Application]\nname = com.example.App_2-b \n")?.name == "com.example.App_2-b")
        #expect(AppLabels.flatpakApp(fromInfo: "[Application]\r\nname=org.example.Pulse\r\n")?.name == "org.example.Pulse")
        // Localised keys and other groups' names are not the app id.
        #expect(AppLabels.flatpakApp(fromInfo: "[Application]\nname[de]=org.example.Puls\nname=org.example.Pulse\n")?.name == "org.example.Pulse")
    }

    @Test("a .flatpak-info naming no well-formed application names none")
    func flatpakWithoutApplication() {
        let runtime = "[Runtime]\nname=org.freedesktop.Platform\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\n"
        #expect(AppLabels.flatpakApp(fromInfo: runtime) == nil)
        #expect(AppLabels.flatpakApp(fromInfo: "") == nil)
        #expect(AppLabels.flatpakApp(fromInfo: "name=org.example.Pulse\n") == nil)  // outside any group
        for bad in ["org", "../../etc/passwd", "org.example.", ".org.example", "org..example", "org.1example.App", "org.example/Pulse", "org.ex ample.P", ""] {
            #expect(AppLabels.flatpakApp(fromInfo: "[Application]\nname=\(bad)\n") == nil, "\(bad)")
        }
        #expect(AppLabels.flatpakApp(fromInfo: "[Application]\nname=org.a.B\nname=org.c.D\n") == nil)
        #expect(AppLabels.flatpakApp(fromInfo: "[Application\nname=org.example.Pulse\n") == nil)
        #expect(AppLabels.flatpakApp(fromInfo: "[Application]\nname=" + String(repeating: "a.", count: 130) + "b\n") == nil)
    }

    // MARK: snaps

    @Test("a snap's name comes from its AppArmor label")
    func snapLabels() {
        let named: [(String, String)] = [
            ("snap.pulse.pulse (enforce)", "pulse"),
            ("snap.firefox.firefox (enforce)", "firefox"),
            ("snap.lxd.daemon (complain)", "lxd"),
            ("snap.pulse.hook.configure (enforce)", "pulse"),
            ("snap.pulse_beta.pulse (enforce)", "pulse_beta"),  // a parallel install
            ("snap.hrm-tools.export-daily (enforce)", "hrm-tools"),
            ("snap.pulse.pulse (enforce)\0", "pulse"),
            ("snap.pulse.pulse", "pulse"),
        ]
        for (label, snap) in named {
            #expect(AppLabels.snap(fromSecurityLabel: label)?.description == "snap:" + snap, "\(label)")
        }
    }

    @Test("other labels name no snap")
    func otherLabels() {
        for label in [
            "unconfined", "snap-update-ns.pulse (enforce)", "/usr/sbin/cupsd (enforce)", "system_u:system_r:unconfined_t:s0",
            "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023", "snap.pulse (enforce)", "snap.Pulse.pulse (enforce)",
            "snap..pulse (enforce)", "snap.pulse.hook. (enforce)", "snap.pulse.notahook.configure (enforce)", "snap.pulse.pulse enforce",
            "snap.-pulse.pulse (enforce)", "snap.pulse_toolongkey123.pulse (enforce)", "snap.pulse.pu/lse (enforce)", "",
            "lxd-box_</var/snap/lxd/common/lxd>//&:lxd-box_<var-snap-lxd-common-lxd>:snap.pulse.pulse (enforce)",
        ] {
            #expect(AppLabels.snap(fromSecurityLabel: label) == nil, "\(label)")
        }
    }

    // MARK: systemd units

    @Test("a system service's unit comes from its cgroup, nested slices and delegated subtrees too")
    func systemServices() {
        let units: [(String, String)] = [
            ("0::/system.slice/hrm-export.service\n", "hrm-export.service"),
            ("0::/system.slice/system-getty.slice/getty@tty1.service\n", "getty@tty1.service"),
            ("0::/system.slice/system-hrm.slice/system-hrm-export.slice/hrm-export@daily.service\n", "hrm-export@daily.service"),
            ("0::/machine.slice/systemd-nspawn@box.service/payload/system.slice/cron.service\n", "systemd-nspawn@box.service"),
            ("0::/system.slice/cups.service\n", "cups.service"),
            // A hybrid hierarchy (systemd's legacy mode): the unified line counts.
            ("12:pids:/system.slice/hrm-export.service\n1:name=systemd:/system.slice/hrm-export.service\n0::/system.slice/hrm-export.service\n",
             "hrm-export.service"),
        ]
        for (cgroup, unit) in units {
            #expect(AppLabels.serviceUnit(fromCgroup: cgroup, uid: 0)?.description == "unit:" + unit, "\(cgroup)")
        }
    }

    @Test("a user's own services count in their manager; sessions, scopes and other users' managers do not")
    func userServices() {
        let sync = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/hrm-sync.service\n"
        #expect(AppLabels.serviceUnit(fromCgroup: sync, uid: 1000)?.description == "unit:hrm-sync.service")
        #expect(AppLabels.serviceUnit(fromCgroup: sync, uid: 1001) == nil)
        let activated = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/dbus-:1.2-org.gnome.OnlineAccounts@0.service\n"
        #expect(AppLabels.serviceUnit(fromCgroup: activated, uid: 1000)?.name == "dbus-:1.2-org.gnome.OnlineAccounts@0.service")
        for cgroup in [
            "0::/user.slice/user-1000.slice/session-2.scope\n",
            "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-7f3c0e0e-5d1a-4c3b-9a8e-2b1f0c9d8e7a.scope\n",
            "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.example.Pulse-12345.scope\n",
            "0::/user.slice/user-1000.slice/user@1000.service/init.scope\n",
            "0::/user.slice/user-1000.slice/user@1000.service\n",
            "0::/init.scope\n", "0::/\n", "0::/system.slice\n", "", "1:name=systemd:/system.slice/cron.service\n",
            "0::/system.slice/a.service\n0::/system.slice/b.service\n", "0::system.slice/cron.service\n",
            "0::/system.slice/bad name.service\n",
        ] {
            #expect(AppLabels.serviceUnit(fromCgroup: cgroup, uid: 1000) == nil, "\(cgroup)")
        }
    }

    // MARK: names

    @Test("a manager may name verified sources; a caller can never declare one")
    func verifiedSourceNames() throws {
        for source in ["nobody/flatpak:org.example.Pulse", "mary/snap:pulse", "root/unit:hrm-export.service"] {
            #expect(SourceNames.isValid(source), "\(source)")
        }
        for source in ["mary/flatpak:", "mary/flatpak:org", "mary/snap:Pulse", "mary/unit:cron.timer", "mary/other:thing"] {
            #expect(!SourceNames.isValid(source), "\(source)")
        }
        let caller = Caller(busName: ":1.7", uid: 1000, user: "mary", allowsInteraction: false)
        #expect(throws: RequestFailure.self) { try caller.source(app: "flatpak:org.example.pulse") }
        var verified = caller
        verified.verifiedApp = VerifiedApp(kind: .flatpak, name: "org.example.Pulse")
        #expect(try verified.source(app: "whatever it says") == "mary/flatpak:org.example.Pulse")
        #expect(try caller.source(app: "myapp") == "mary/myapp")
    }

    // MARK: /proc

    @Test("a process is read through its pinned /proc directory; an exited one is gone")
    func peerProcess() throws {
        let own = try PeerProcess(pid: getpid())
        #expect(try own.cgroup().contains("0::/"))
        #expect(try own.flatpakInfo() == nil)
        try own.checkAlive()

        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        #expect(throws: PeerProcess.Failure.gone) { _ = try PeerProcess(pid: child.processIdentifier) }
        #expect(throws: PeerProcess.Failure.gone) { _ = try PeerProcess(pid: 0) }
    }
}
