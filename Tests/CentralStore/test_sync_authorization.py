"""What leaves the machine is what the user lets hrmd/sync read: nothing before the grant (and the
log says how to grant), everything since the start after it; a revoke stops new samples from the
next batch, and a new grant sends the rest."""

from sync_harness import SyncTest, wait_until


class AuthorizationTest(SyncTest):
    def test_read_grant_revoke_and_grant_again(self):
        central = self.central()
        central.add_gateway_role("gw1")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=a,hz=10,seed=11"], sync=["batch = 50"])
        gateway.grant(read=False)
        gateway.start()
        gateway.wait_for_line("sync: heart-rate stays on this machine until the user allows it: "
                              "hrmctl auth grant hrmd/sync heart-rate --read")
        wait_until(lambda: gateway.count() >= 30, 20, "30 local samples", interval=0.2)
        self.assertEqual(central.count(), 0, "samples left the machine without the read grant")

        gateway.grant_read()
        gateway.wait_for_line("sync: hrmd/sync may read heart-rate: sending it")
        first = gateway.samples()[0]
        self.caught_up(central, gateway)
        self.assertIn(first[2], {start // 1000 for _g, _t, _d, start, _v in central.samples()},
                      "the first sample, from before the grant, is central")

        gateway.revoke_read()
        gateway.wait_for_line("sync: hrmd/sync may no longer read heart-rate")
        held = central.count()
        recorded = gateway.count()
        wait_until(lambda: gateway.count() >= recorded + 30, 20, "30 more local samples", interval=0.2)
        # The sync looks at least once a second: three seconds of passes since the revoke, nothing sent.
        self.assertEqual(central.count(), held, "samples sent after the revoke")

        gateway.grant_read()
        gateway.wait_for_line("sync: hrmd/sync may read heart-rate: sending it", count=2)
        self.caught_up(central, gateway)
        self.assertEqual(gateway.stop(), 0)
        self.check(central, [gateway])
