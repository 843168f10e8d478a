"""The central store going away while hrmd syncs: PostgreSQL stopped (fast, then immediate: a
crash mid-batch) and started again, and a connection that goes silent without a FIN (a
blackholing proxy). hrmd says so once, records on, and catches up; nothing lost or doubled."""

import os
import time

from sync_harness import SyncTest, wait_until
from tcp_proxy import TcpProxy

WARNING = "recording goes on locally"


class ServerStopTest(SyncTest):
    def test_server_stopped_fast_and_immediate_while_batches_flow(self):
        central = self.central()
        central.add_gateway_role("gw1")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=a,hz=20,seed=3", "mock:id=b,hz=20,seed=4"],
                               sync=["batch = 50", "retry-max = 2"])
        gateway.grant()
        gateway.start()
        gateway.wait_for_line("sync: connected")
        for outage, mode in enumerate(("fast", "immediate"), start=1):
            moved = central.batches("gw1")
            wait_until(lambda: central.batches("gw1") >= moved + 3, 20, "the cursor to move three times", interval=0.05)
            self.pg.stop(mode)
            gateway.wait_for_line(WARNING, 20, count=outage)
            recorded = gateway.count()
            # Recording goes on while hrmd retries (several attempts at 0.5, 1, 2 s).
            wait_until(lambda: gateway.count() >= recorded + 120, 20, "the local store to grow by 120", interval=0.2)
            self.pg.start()
            gateway.wait_for_line("sync: connected", 20, count=outage + 1)
            gateway.wait_for_line("sync: caught up", 30, count=outage)
            self.assertEqual(len(gateway.output.matching(WARNING)), outage,
                             "one warning per outage, not one per retry:\n" + "\n".join(gateway.output.matching("sync:")))
        self.caught_up(central, gateway)
        self.assertEqual(gateway.stop(), 0)
        self.check(central, [gateway])


class BlackholeTest(SyncTest):
    def test_connection_goes_silent_without_fin(self):
        central = self.central()
        central.add_gateway_role("gw1", "gw1-Pa55-silent")
        proxy = TcpProxy("127.0.0.1", self.pg.port)
        self.addCleanup(proxy.close)
        passfile = os.path.join(self.work, "pgpass")
        with open(passfile, "w") as file:
            file.write("*:*:hrmd:gw1:gw1-Pa55-silent\n")
        os.chmod(passfile, 0o600)
        gateway = self.gateway("gw1", central.url("gw1", port=proxy.port), env={"PGPASSFILE": passfile},
                               sensors=["mock:id=a,hz=20,seed=5"], sync=["batch = 50", "timeout = 2", "retry-max = 2"])
        gateway.grant()
        gateway.start()
        gateway.wait_for_line("sync: connected")
        wait_until(lambda: central.batches("gw1") >= 3, 20, "three batches", interval=0.05)
        proxy.blackhole()
        silent = time.monotonic()
        gateway.wait_for_line(WARNING, 15)
        noticed = time.monotonic() - silent
        self.assertLess(noticed, 8, "hrmd took %.1f s to notice a silent connection with timeout = 2" % noticed)
        recorded = gateway.count()
        wait_until(lambda: gateway.count() >= recorded + 80, 20, "the local store to grow by 80", interval=0.2)
        proxy.resume()
        gateway.wait_for_line("sync: connected", 20, count=2)
        gateway.wait_for_line("sync: caught up", 30)
        self.assertEqual(len(gateway.output.matching(WARNING)), 1,
                         "one warning, not one per retry:\n" + "\n".join(gateway.output.matching("sync:")))
        self.caught_up(central, gateway)
        self.assertEqual(gateway.stop(), 0)
        self.check(central, [gateway], noticed_seconds=round(noticed, 1))
