"""hrmd SIGKILLed a hundred times at random moments while it syncs small, frequent batches; the
local store grows between kills, and once hrmd runs to the end the central store holds every
sample once: a batch and its cursor commit together or not at all."""

import os
import random
import time

from sync_harness import SyncTest, wait_until

KILLS = int(os.environ.get("HRMD_SYNC_KILLS", "100"))


class KillTest(SyncTest):
    def test_sigkill_mid_batch_a_hundred_times(self):
        seed = int(os.environ.get("HRMD_SYNC_KILL_SEED", str(int(time.time() * 1000) % 1_000_000)))
        print("\n  kill seed: %d (HRMD_SYNC_KILL_SEED=%d repeats it)" % (seed, seed), flush=True)
        chance = random.Random(seed)
        central = self.central()
        central.add_gateway_role("gw1")
        gateway = self.gateway("gw1", central.url("gw1"),
                               sensors=["mock:id=a,hz=50,seed=7", "mock:id=b,hz=50,seed=8,bpm=80"],
                               sync=["batch = 50", "retry-max = 1"])
        gateway.grant()
        recorded = gateway.count()
        for kill in range(KILLS):
            gateway.start()
            if kill % 2 == 0:
                gateway.wait_for_line("sync: connected", 20)
            else:
                # Batches flowing: the cursor moved since this run started.
                moved = central.batches("gw1")
                wait_until(lambda: central.batches("gw1") > moved or not gateway.running, 20, "the cursor to move")
            time.sleep(chance.uniform(0, 0.3))   # the random moment of the kill, not a wait for anything
            gateway.kill()
            self.assertEqual(gateway.process.returncode, -9, gateway.output.text()[-3000:])
            if kill % 10 == 9:
                now = gateway.count()
                self.assertGreater(now, recorded, "the local store did not grow over ten runs")
                recorded = now
        gateway.start()
        gateway.wait_for_line("sync: connected", 20)
        self.caught_up(central, gateway, timeout=60)
        self.assertEqual(gateway.stop(), 0)
        text = gateway.text()
        self.check(central, [gateway], seed=seed, kills=KILLS,
                   cursor_moved=text.count("cursor is at"), batches=central.batches("gw1"))
