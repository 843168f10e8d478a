"""Three gateways, each with its own role and its own mock straps, syncing at once: the central
store holds the union of their stores, sample by sample; row-level security keeps each role to
its own rows, and an analyst reads but does not write."""

from sync_harness import SyncTest, wait_until


class GatewaysTest(SyncTest):
    def test_three_gateways_sync_concurrently_and_only_write_their_own_rows(self):
        central = self.central()
        gateways = []
        for number in (1, 2, 3):
            name = "gw%d" % number
            central.add_gateway_role(name)
            gateway = self.gateway(name, central.url(name), types=("heart-rate", "rr-interval"),
                                   sensors=["mock:id=%s-a,hz=4,seed=%d" % (name, number),
                                            "mock:id=%s-b,hz=4,seed=%d,bpm=90" % (name, number + 10)],
                                   sync=["batch = 40"])
            gateway.grant()
            gateways.append(gateway)
        for gateway in gateways:
            gateway.start()
        for gateway in gateways:
            gateway.wait_for_line("sync: connected to hrmd as %s, gateway %s" % (gateway.name, gateway.name))
        # Every gateway's batches flowing at once, a few each.
        wait_until(lambda: all(central.batches(g.name) >= 6 for g in gateways), 30, "six batches from every gateway",
                   interval=0.2)
        for gateway in gateways:
            self.caught_up(central, gateway)
        for gateway in gateways:
            self.assertEqual(gateway.stop(), 0)
            gateway.wait_for_line("sync: stopped:")

        # Row-level security: gw2 sees gw1's rows but cannot change or remove them. It changes no
        # row directly (updates and deletions go through the schema's functions) ...
        self.assertGreater(int(central.sql("SELECT count(*) FROM hrmd.chunk c JOIN hrmd.gateway g ON g.id = c.gateway_id "
                                           "WHERE g.name = 'gw1'", user="gw2")), 0)
        gw1 = "(SELECT id FROM hrmd.gateway WHERE name = 'gw1')"
        gw2 = "(SELECT id FROM hrmd.gateway WHERE name = 'gw2')"
        for statement in ("UPDATE hrmd.chunk SET count = count WHERE gateway_id = %s RETURNING 1" % gw1,
                          "DELETE FROM hrmd.chunk WHERE gateway_id = %s RETURNING 1" % gw1,
                          "UPDATE hrmd.cursor SET anchor = 0 WHERE gateway_id = %s RETURNING 1" % gw1):
            refused = central.sql("WITH changed AS (%s) SELECT count(*) FROM changed" % statement, user="gw2", check=False)
            self.assertNotEqual(refused.returncode, 0, statement)
            self.assertIn("permission denied", refused.stderr, statement)
        # ... and through the functions it reaches its own rows alone.
        first_chunk = central.sql("SELECT min(id) FROM hrmd.chunk WHERE gateway_id = %s" % gw1)
        central.sql("SELECT hrmd.chunk_drop(%s)" % first_chunk, user="gw2")
        self.assertEqual(central.sql("SELECT count(*) FROM hrmd.chunk WHERE id = %s" % first_chunk), "1")
        touched = "SELECT last_batch FROM hrmd.gateway WHERE name = '%s'"
        before = (central.sql(touched % "gw1"), central.sql(touched % "gw2"))
        central.sql("SELECT hrmd.gateway_touch(%s), hrmd.gateway_touch(%s)" % (gw1, gw2), user="gw2")
        self.assertEqual(central.sql(touched % "gw1"), before[0], "gw2 touched gw1's row")
        self.assertNotEqual(central.sql(touched % "gw2"), before[1], "gw2 could not touch its own row")
        # An analyst reads every gateway's samples and writes nothing.
        self.assertEqual(central.sql("SELECT count(DISTINCT gateway) FROM hrmd.samples WHERE gateway LIKE 'gw%'",
                                     user="analyst"), "3")
        for statement in ("DELETE FROM hrmd.chunk", "UPDATE hrmd.chunk SET count = 0",
                          "INSERT INTO hrmd.gateway (name) VALUES ('sneaky')"):
            refused = central.sql(statement, user="analyst", check=False)
            self.assertNotEqual(refused.returncode, 0, statement)
            self.assertIn("permission denied", refused.stderr)

        counts = self.check(central, gateways)
        self.assertGreater(len({row[0] for row in central.samples()} & {"gw1", "gw2", "gw3"}), 2)
        self.assertGreater(counts["union"], 50)
