"""The store service under load and abuse, against the real hrmd --serve: 100 clients querying at
once while 20 mock straps ingest (nothing accepted is lost), a client that vanishes mid-call, and
the store files' modes. Each test runs its own hrmd; every wait is bounded.
"""

import os
import re
import sqlite3
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import NOBODY  # noqa: E402

STRAPS = 20
CLIENTS = 100
LOAD_SECONDS = 8


class ServiceLoadTests(harness.ServiceTestCase):
    shares_hrmd = False  # each test runs its own hrmd

    def stop_and_read(self, hrmd):
        """Stops hrmd with SIGTERM (it flushes) and returns (its output, heart-rate rows stored)."""
        status = harness.stop_process(hrmd.process)
        self.assertEqual(status, 0, hrmd.output()[-3000:])
        output = hrmd.output()
        with sqlite3.connect(hrmd.store) as db:
            rows = db.execute(
                "SELECT IFNULL(SUM(s.count), 0) FROM series s JOIN sampleType t ON t.id = s.typeId"
                " WHERE t.identifier = 'heart-rate'"
            ).fetchone()[0]
        return output, rows

    def test_a_hundred_clients_query_while_twenty_straps_ingest_and_nothing_is_lost(self):
        sensors = ["mock:hz=4,rr=off,contact-loss=0,id=m%d,seed=%d" % (n, n) for n in range(STRAPS)]
        hrmd = harness.Hrmd(self.bus, sensors=sensors)
        try:
            hrmd.proxy().SetAuthorization("hrmd", "heart-rate", "share", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
            # One process of uid nobody, 100 connections of its own, each asking again as soon as
            # it is answered, for LOAD_SECONDS; it prints how many answers and errors it got.
            load = harness.background_snippet_as(NOBODY, self.bus, """
                clients = [dbus.Interface(dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"]).get_object(
                    "org.hrmd.Health", "/org/hrmd/Health", introspect=False), "org.hrmd.Health1") for _ in range(%d)]
                counts = {"answers": 0, "errors": []}
                loop = GLib.MainLoop()
                end = time.monotonic() + %d
                outstanding = [0]
                def ask(client):
                    if time.monotonic() >= end:
                        if outstanding[0] == 0:
                            loop.quit()
                        return
                    outstanding[0] += 1
                    def done(*_):
                        outstanding[0] -= 1
                        counts["answers"] += 1
                        ask(client)
                    def failed(error):
                        outstanding[0] -= 1
                        counts["errors"].append(error.get_dbus_name())
                        ask(client)
                    client.QuerySamples("loadtest", "heart-rate", dbus.Int64(NO_LOW), dbus.Int64(NO_HIGH), dbus.UInt32(100),
                                        signature="ssxxu", reply_handler=done, error_handler=failed, timeout=30)
                for client in clients:
                    ask(client)
                GLib.timeout_add_seconds(%d, loop.quit)
                loop.run()
                out({"answers": counts["answers"], "errors": sorted(set(counts["errors"])), "errorCount": len(counts["errors"])})
                """ % (CLIENTS, LOAD_SECONDS, LOAD_SECONDS + 30))
            status, lines, stderr = load.finish(timeout=LOAD_SECONDS + 45)
            self.assertEqual(status, 0, "%s\n%s" % (lines, stderr[-2000:]))
            result = harness.json.loads(lines[-1])
            self.assertEqual(result["errorCount"], 0, result)
            self.assertGreaterEqual(result["answers"], CLIENTS, result)
            self.assertTrue(hrmd.alive(), hrmd.output()[-3000:])
            output, rows = self.stop_and_read(hrmd)
            stopped = re.search(r"ingest stopped: (\d+) frames, (\d+) samples stored, (\d+) already stored, (\d+) not authorized, (\d+) skipped", output)
            self.assertIsNotNone(stopped, output[-3000:])
            frames, stored, unchanged, denied, skipped = map(int, stopped.groups())
            self.assertGreater(stored, STRAPS * 4 * LOAD_SECONDS // 2, output[-2000:])
            # Frames include each strap's reads (location, device information): at most one sample
            # per frame here (rr=off), and none denied, skipped or lost.
            self.assertLessEqual(stored + denied + unchanged + skipped, frames, output[-2000:])
            self.assertEqual((denied, skipped), (0, 0), output[-2000:])
            self.assertNotIn("could not be written", output)
            self.assertEqual(rows, stored, "every accepted frame is in the store")
        finally:
            hrmd.stop()

    def test_a_client_that_vanishes_mid_call_leaves_the_service_serving(self):
        hrmd = harness.Hrmd(self.bus, sensors=["mock:hz=50,rr=off,contact-loss=0"])
        try:
            proxy = hrmd.proxy()
            proxy.SetAuthorization("hrmd", "heart-rate", "share", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
            proxy.SetAuthorization("nobody/vanish", "heart-rate", "read", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
            harness.wait_for(lambda: len(proxy.QuerySamples("t", "heart-rate", harness.NO_LOW, harness.NO_HIGH, 200,
                                                               signature="ssxxu")) >= 200, timeout=20)
            # Asks for every sample into a pipe it never reads, then dies before the answer.
            status, out, err = harness.run_snippet_as(NOBODY, self.bus, """
                reader, writer = os.pipe()
                raw.QuerySamplesToFile("vanish", "heart-rate", dbus.Int64(NO_LOW), dbus.Int64(NO_HIGH),
                                       dbus.Dictionary({}, signature="sv"), dbus.types.UnixFd(writer),
                                       signature="ssxxa{sv}h", reply_handler=lambda *a: None, error_handler=lambda e: None)
                os.close(writer)
                bus.flush()
                os._exit(0)
                """)
            self.assertEqual(status, 0, err[-2000:])
            # A client that calls and disconnects at once.
            for _ in range(5):
                harness.run_snippet_as(NOBODY, self.bus, """
                    raw.QuerySamples("vanish", "heart-rate", dbus.Int64(NO_LOW), dbus.Int64(NO_HIGH), dbus.UInt32(0),
                                     signature="ssxxu", reply_handler=lambda *a: None, error_handler=lambda e: None)
                    bus.flush()
                    os._exit(0)
                    """)
            reply = harness.call_as(NOBODY, self.bus, "len(health.QuerySamples('vanish', 'heart-rate', NO_LOW, NO_HIGH, 10))")
            self.assertTrue(reply.ok, repr(reply) + hrmd.output()[-2000:])
            self.assertEqual(reply.value, 10)
            self.assertTrue(hrmd.alive(), hrmd.output()[-3000:])
        finally:
            hrmd.stop()

    def test_the_store_files_are_private_to_the_service(self):
        # An older store, group-writable as the earlier unit made it.
        directory = harness.tempfile.mkdtemp(prefix="hrmd-old-")
        old = os.path.join(directory, "old.sqlite")
        try:
            hrmctl = os.path.join(os.path.dirname(harness.hrmd_binary()), "hrmctl")
            subprocess.run([hrmctl, "auth", "grant", "hrmd", "heart-rate", "--store", old],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=True)
            os.chmod(old, 0o660)
            hrmd = harness.Hrmd(self.bus, extra_arguments=())
            try:
                proxy = hrmd.proxy()
                proxy.SetAuthorization("hrmd", "heart-rate", "share", "sharingAuthorized", timeout=harness.CALL_TIMEOUT_S)
                for suffix in ("", "-wal", "-shm"):
                    path = hrmd.store + suffix
                    self.assertTrue(harness.wait_for(lambda: os.path.exists(path), timeout=10), path)
                    mode = stat.S_IMODE(os.stat(path).st_mode)
                    self.assertEqual(mode & 0o077, 0, "%s is %o" % (path, mode))
                # Another user cannot open it.
                status, _, err = harness.run_as(NOBODY, self.bus, ["/usr/bin/python3", "-c",
                                                                  "open(%r, 'rb').read(1)" % hrmd.store])
                self.assertNotEqual(status, 0)
                self.assertIn("Permission denied", err)
            finally:
                hrmd.stop()
            # An existing group-readable store is made private when it is served.
            served = subprocess.run(
                [harness.hrmd_binary(), "--serve", "--store", old, "--sensor", "mock", "--duration", "1"],
                env=self.bus.env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
            self.assertEqual(stat.S_IMODE(os.stat(old).st_mode) & 0o077, 0, served.stderr.decode()[-2000:])
        finally:
            harness.shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
