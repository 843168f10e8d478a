"""A compromised gateway: its role tries everything a gateway's rights once allowed against the
others (renaming the shared source and device rows, locking any table readers use, changing
another gateway's rows through the schema's functions, overriding another gateway's sample
identity with a higher version, a malformed chunk). None of it changes what an analyst
or the other gateway sees, and the other gateway's sync goes on."""

from sync_harness import SyncTest, wait_until


class CompromisedGatewayTest(SyncTest):
    def test_a_compromised_gateway_changes_and_stalls_nothing_of_the_others(self):
        central = self.central()
        central.add_gateway_role("room1")
        central.add_gateway_role("evil")
        room1 = self.gateway("room1", central.url("room1"), sensors=["mock:id=room1-strap,hz=4,seed=1"], sync=["batch = 40"])
        room1.grant()
        room1.start()
        room1.wait_for_line("sync: connected to hrmd as room1, gateway room1")
        wait_until(lambda: room1.count() >= 8, 30, "room1's first samples")
        self.caught_up(central, room1)
        strap = central.sql("SELECT DISTINCT d.identifier FROM hrmd.chunk c JOIN hrmd.device d ON d.id = c.device_id "
                            "JOIN hrmd.gateway g ON g.id = c.gateway_id WHERE g.name = 'room1'")
        self.assertTrue(strap, "room1's strap is not in the central store")
        device_query = "SELECT identifier, coalesce(name, ''), coalesce(manufacturer, '') FROM hrmd.device WHERE identifier = '%s'" % strap
        device_before = central.sql(device_query)
        sources_before = central.sql("SELECT name FROM hrmd.source ORDER BY id")

        def refused(statement, expect="permission denied"):
            result = central.sql(statement, user="evil", check=False)
            self.assertNotEqual(result.returncode, 0, "%s was allowed" % statement)
            self.assertIn(expect, result.stderr, statement)

        # The shared rows: no rename, no removal, no lock that would hold readers.
        refused("UPDATE hrmd.source SET name = 'someone-else' WHERE name = 'hrmd'")
        refused("UPDATE hrmd.device SET name = 'Not Yours' WHERE identifier = '%s'" % strap)
        refused("DELETE FROM hrmd.device WHERE identifier = '%s'" % strap)
        refused("INSERT INTO hrmd.device (identifier, name) VALUES ('planted', 'x')")
        refused("BEGIN; LOCK TABLE hrmd.device IN ACCESS EXCLUSIVE MODE; COMMIT")
        refused("BEGIN; LOCK TABLE hrmd.source IN EXCLUSIVE MODE; COMMIT")
        # Through the function a gateway may add a device, and change none another wrote.
        central.sql("SELECT hrmd.device_id('%s', 'Renamed', 'Evil Corp', 'X', 'h', 'f', 's')" % strap, user="evil")
        central.sql("SELECT hrmd.source_id('hrmd', 'evil-version')", user="evil")
        self.assertEqual(device_before, central.sql(device_query))
        self.assertEqual(sources_before, central.sql("SELECT name FROM hrmd.source ORDER BY id"))

        # A sample identity room1 wrote first stays room1's: a higher version from evil is not read.
        insert = ("INSERT INTO hrmd.synced_sample (gateway_id, type, source_id, sync_identifier, sync_version, start_time, "
                  "end_time, value, anchor) VALUES ((SELECT id FROM hrmd.gateway WHERE name = '%s'), 'heart-rate', "
                  "(SELECT id FROM hrmd.source WHERE name = 'hrmd'), 'identity-1', %d, 1000000, 1000000, %d, 1)")
        central.sql(insert % ("room1", 1, 70), user="room1")
        central.sql("INSERT INTO hrmd.gateway (name) VALUES ('evil')", user="evil")
        central.sql(insert % ("evil", 99, 199), user="evil")
        self.assertEqual("70", central.sql("SELECT value FROM hrmd.samples WHERE sync_identifier = 'identity-1'", user="analyst"))

        # A malformed chunk of its own is refused when written: nobody ever reads one.
        refused("INSERT INTO hrmd.chunk (gateway_id, type, source_id, first_start, last_start, first_anchor, last_anchor, "
                "count, minimum, maximum, sum, starts, vals, anchors) VALUES ((SELECT id FROM hrmd.gateway WHERE name = 'evil'), "
                "'heart-rate', (SELECT id FROM hrmd.source WHERE name = 'hrmd'), 1, 2, 1, 2, 2, 60, 61, 121, "
                "'{{1,2},{3,4}}', '{60,61}', '{1,2}')", expect="chunk_shape")

        # No lock on any table readers use: gateways hold SELECT and INSERT alone (ROW EXCLUSIVE
        # at most), and change their own rows through the schema's functions, which row security
        # keeps to the caller's rows.
        for table in ("chunk", "synced_sample", "gateway", "cursor", "tombstone"):
            refused("BEGIN; LOCK TABLE hrmd.%s IN ACCESS EXCLUSIVE MODE; COMMIT" % table)
            refused("BEGIN; LOCK TABLE hrmd.%s IN SHARE MODE; COMMIT" % table)
        refused("SELECT id FROM hrmd.chunk FOR UPDATE")
        refused("UPDATE hrmd.chunk SET vals = vals WHERE false")
        refused("DELETE FROM hrmd.synced_sample WHERE false")
        room1_chunks = "SELECT count(*) FROM hrmd.chunk c JOIN hrmd.gateway g ON g.id = c.gateway_id WHERE g.name = 'room1'"
        chunks_before = int(central.sql(room1_chunks))
        first_chunk = central.sql("SELECT min(c.id) FROM hrmd.chunk c JOIN hrmd.gateway g ON g.id = c.gateway_id WHERE g.name = 'room1'")
        central.sql("SELECT hrmd.chunk_drop(%s)" % first_chunk, user="evil")
        central.sql("SELECT hrmd.chunk_replace(%s, '{1}', '{1}', '{1}', NULL, 1, 1, 1, 1, 1, 1, 1, 1)" % first_chunk, user="evil")
        central.sql("SELECT hrmd.gateway_touch((SELECT id FROM hrmd.gateway WHERE name = 'room1'))", user="evil")
        self.assertGreaterEqual(int(central.sql(room1_chunks)), chunks_before, "evil dropped room1's chunk")
        self.assertNotEqual("1", central.sql("SELECT count FROM hrmd.chunk WHERE id = %s" % first_chunk), "evil rewrote room1's chunk")
        refused("SELECT hrmd.cursor_take((SELECT id FROM hrmd.gateway WHERE name = 'room1'), 'heart-rate')", expect="is not")

        # room1 syncs on, and an analyst reads everything.
        mark = central.count("room1")
        wait_until(lambda: central.count("room1") > mark, 30, "room1's next batch")
        self.caught_up(central, room1)
        self.assertGreater(central.count("room1"), 0)
        self.assertEqual(room1.stop(), 0)
