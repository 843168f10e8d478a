import ArgumentParser
import CommandSupport

extension HRMDaemon {
    /// hrmd's help: `--help` prints it and the man page, hrmd(8), is generated from it
    /// (`make install`), with the options' own help below.
    static let configuration = CommandConfiguration(
        commandName: "hrmd",
        abstract: "Record heart rate from chest straps into the shared health store.",
        discussion: """
            hrmd runs in the foreground (systemd runs it as a service). It reads Heart Rate
            Measurements from the sensors named with --sensor (or in the configuration
            file), tags each sample with the sensor's body location, and writes the
            samples to the store, but only the types its source "hrmd" is authorized to
            share. Until then it logs the command that grants them, for example:

              hrmctl auth grant hrmd heart-rate

            and starts storing within a second of the grant, without a restart. A revoke
            stops storage from the next write. SIGTERM or SIGINT writes what is pending
            and exits 0.

            SENSORS (--sensor SPEC, repeatable)
              mock[:key=value,…]       the built-in mock strap; keys: bpm (resting,
                                       30…220), hz (notifications per second), rr
                                       (on|off), location
                                       (other|chest|wrist|finger|hand|earLobe|foot),
                                       seed, id (device name, default mock-N),
                                       contact-loss (0…1), ecg and acc (on|off:
                                       Polar H10 ECG and acceleration as PMD
                                       frames, default off)
              ble                      BLE straps through bluetoothd: the straps
                                       trusted or paired in BlueZ (bluetoothctl
                                       trust ADDRESS)
              ble:AA:BB:CC:DD:EE:FF    this strap only (repeatable); all ble specs
                                       share one connection to bluetoothd, each strap
                                       its own link, reconnected after a drop
              hci                      BLE straps straight through the kernel's HCI
                                       and L2CAP sockets, for machines without
                                       bluetoothd, on the first adapter: the straps
                                       the ble:ADDRESS specs list (then no BlueZ),
                                       or any with --any-strap. Needs CAP_NET_RAW
                                       and CAP_NET_ADMIN (the unit's hci drop-in,
                                       or setcap cap_net_raw,cap_net_admin+ep);
                                       brings a down adapter up. Never with
                                       bluetoothd running on that adapter
              hci:hci1                 the same on that adapter
              ant:/dev/ttyUSB0         ANT+ straps through the ANT USB stick on that
                                       tty (up to 8 straps, each its own device
                                       ant-<device number>; 115200 baud). ANT+ has no
                                       body location: set one under [locations]
              serial:/dev/ttyACM0[,baud=N]  a serial heart-rate sensor sending lines
                                       "HR <bpm> [RR <ms>…] [BATT <percent>]"
                                       (default 115200 baud); device serial-<tty>
              ant                      every ANT stick udev finds, now and when
                                       plugged in (HRMD_SENSOR=ant, or a Dynastream
                                       stick 0fcf:1008/1009/1004)
              serial                   every serial sensor udev marks
                                       HRMD_SENSOR=serial (baud from HRMD_BAUD)
              replay:FILE[,handle=H]   a recorded hrmd trace, FIT file or btsnoop
                                       capture, played at its recorded pace with its
                                       original timestamps; handle= names the Heart
                                       Rate Measurement handle of a capture without
                                       its GATT discovery (0x000e)
              A tty that is missing, busy or unplugged, and for hci no Bluetooth in
              the kernel, no adapter or missing capabilities, is a waiting state
              retried with backoff (1 s doubling to 60 s) until it works; it never
              stops hrmd.

            RECORDING
              --record DIR writes every raw frame and lifecycle event to hrmd-trace
              files (JSON Lines, the hrmd-trace format) named hrmd-<start time>.trace.jsonl, a new
              file every 64 MiB. A line is whole or absent; a full disk is logged and
              never stops ingest.
              "hrmctl replay FILE" or --sensor replay:FILE plays a recording back.

            STORE
              --store PATH, else $HRMD_STORE, else the configuration's "store", else
              /var/lib/hrmd/hrmd.sqlite. The file is created when missing (its directory
              is not).

            THE STORE SERVICE (--serve, or serve = yes; on in the installed unit)
              Also serves the store on the system bus as org.hrmd.Health (interface
              org.hrmd.Health1, /usr/share/dbus-1/interfaces/org.hrmd.Health1.xml):
              applications save and query samples as USER/APP, where USER is the login
              name of the uid the bus daemon verified; each needs the user's grant per
              type ("hrmctl auth requests" lists what they asked for). A reader without
              read authorization sees only its own samples. Managers (root, the service's
              user, and whoever polkit allows org.hrmd.health.manage: group hrmd by the
              shipped rules) grant, read every source, delete and import. The store's
              files, like every file hrmd creates, are private to hrmd's user (umask
              077). Without a system bus it waits for one; when another process owns
              the name it exits 69.

            THE HTTP FRONT (--http HOST:PORT, or [http]; off by default)
              Serves the store's requests as JSON under /api/v1/ (samples with paging,
              statistics, HRV, zones, changes, authorization), a live stream of new
              samples and sensor states (/api/v1/live: Server-Sent Events or a
              WebSocket), and the dashboard: / (tiles per strap; ?view=group for a TV),
              /overlay?device=ID (a stream overlay) and /day. Every request carries a
              token: "hrmctl auth token create USER/APP" makes one, and the token acts
              as that source with exactly its authorization. Loopback by default; a
              non-loopback address needs [http] certificate and key (TLS), or
              insecure = yes, which is logged as a warning at every start. The log
              says "http: listening on URL" once it listens (port 0 picks one).

            CONFIGURATION
              --config FILE, else /etc/hrmd/hrmd.conf when it exists. INI format:
                [hrmd]
                store = /var/lib/hrmd/hrmd.sqlite
                sensor = mock:bpm=70        (repeatable; --sensor flags replace these)
                any-strap = no              (yes: like --any-strap)
                serve = no                  (yes: like --serve)
                flush-interval = 0.5        (seconds between batched writes; 0.05 by
                                            default while the HTTP front is on)
                log-level = info
                [locations]
                AA:BB:CC:DD:EE:FF = chest   (wins over what the sensor reports)
                [http]
                listen = 127.0.0.1:8080     (like --http)
                certificate = /etc/hrmd/tls/cert.pem
                key = /etc/hrmd/tls/key.pem (both: TLS)
                insecure = no               (yes: plain HTTP off loopback)
                max-heart-rate = 190        (zone colours; or age = 40)
                [max-heart-rate]
                mock-2 = 175                (per device)
                [mqtt]
                broker = mqtt://127.0.0.1:1883  (live heart rate to MQTT and Home
                                            Assistant; docs/mqtt.md has every key)
                [sync]
                url = service=hrmd          (send what hrmctl auth lets hrmd/sync read
                                            to a central PostgreSQL store; gateway =
                                            NAME, default the host name;
                                            docs/central-store.md has every key)
              The parenthesised notes above are not part of the file: a comment is a
              line of its own starting with # or ;. An unknown key or a bad value is
              a start-up error naming the file, line and key.

            EXIT STATUS
              0 success, 64 usage error, 65 a damaged store (or a write-ahead log
              that belongs to another file) or an unreadable recording, 66 the
              configuration file, the store named or a recording missing, 69 a needed
              service or the system store is unavailable (or org.hrmd.Health is
              owned by another process), 73 the store cannot be
              created, 77 permission denied, 1 anything else.

            EXAMPLES
              hrmd --store ./hr.sqlite --sensor mock --duration 10
              hrmd --sensor mock:bpm=55,hz=4 --sensor mock:location=wrist,seed=7
              hrmd --sensor mock --record /var/lib/hrmd/traces
              hrmd --serve --store /var/lib/hrmd/hrmd.sqlite --sensor ble
              hrmd --store ./hr.sqlite --sensor mock --sensor mock:bpm=80 --http 127.0.0.1:8080
            """,
        version: HRMVersion.current
    )
}
