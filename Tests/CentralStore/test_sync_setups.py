"""Bad set-ups, each said in one clear line while hrmd records on locally, then fixed and caught
up: a wrong password, a role without rights, a schema newer than this hrmd, a database that is
not hrmd's. The password is only in the test's passfile: never in hrmd's output or command line."""

import os

from sync_harness import SyncTest, wait_until

WARNING = "recording goes on locally"
PASSWORD = "gw-Right-Pa55-kept-out"
WRONG = "gw-Wrong-Pa55-kept-out"


class SetupTest(SyncTest):
    def start(self, gateway, needle):
        """Starts GATEWAY, waits for its one warning (holding NEEDLE) and local growth."""
        gateway.grant()
        gateway.start()
        line = gateway.wait_for_line(WARNING, 20)
        self.assertIn(needle, line)
        recorded = gateway.count()
        wait_until(lambda: gateway.count() >= recorded + 20, 20, "the local store to grow by 20", interval=0.2)
        return line

    def fixed(self, central, gateway):
        gateway.wait_for_line("sync: connected", 20)
        self.caught_up(central, gateway)
        warnings = [line for line in gateway.text().splitlines() if WARNING in line]   # every run
        self.assertEqual(len(warnings), 1, "one line, not one per retry:\n" + "\n".join(warnings))
        self.assert_no_password(gateway)
        self.assertEqual(gateway.stop(), 0)

    def assert_no_password(self, gateway):
        for secret in (PASSWORD, WRONG):
            self.assertNotIn(secret, gateway.text(), "a password in hrmd's output")
            with open("/proc/%d/cmdline" % gateway.process.pid, "rb") as cmdline:
                self.assertNotIn(secret.encode(), cmdline.read())

    def test_wrong_password_no_rights_newer_schema_foreign_database(self):
        central = self.central()
        passfile = os.path.join(self.work, "pgpass")
        settings = ["batch = 50", "retry-max = 1"]
        gateways = []

        # A wrong password in the passfile; then the right one.
        central.add_gateway_role("gw1", PASSWORD)
        with open(passfile, "w") as file:
            file.write("127.0.0.1:%d:hrmd:gw1:%s\n" % (self.pg.port, WRONG))
        os.chmod(passfile, 0o600)
        gateway = self.gateway("gw1", central.url("gw1", tcp=True), env={"PGPASSFILE": passfile},
                               sensors=["mock:id=a,hz=10,seed=1"], sync=settings)
        gateways.append(gateway)
        line = self.start(gateway, "password authentication failed")
        self.assertIn("gw1", line)
        self.assert_no_password(gateway)
        with open(passfile + ".new", "w") as file:
            file.write("127.0.0.1:%d:hrmd:gw1:%s\n" % (self.pg.port, PASSWORD))
        os.chmod(passfile + ".new", 0o600)
        os.replace(passfile + ".new", passfile)
        self.fixed(central, gateway)

        # A role that is not in hrmd_gateway; then granted it.
        central.add_gateway_role("gw2", member=False)
        gateway = self.gateway("gw2", central.url("gw2"), sensors=["mock:id=b,hz=10,seed=2"], sync=settings)
        gateways.append(gateway)
        self.start(gateway, "permission denied")
        self.pg.psql("GRANT hrmd_gateway TO gw2")
        self.fixed(central, gateway)

        # A schema newer than this hrmd knows; then the future migration removed.
        central.add_gateway_role("gw3")
        central.sql("INSERT INTO hrmd.migration VALUES (99, 'future')")
        gateway = self.gateway("gw3", central.url("gw3"), sensors=["mock:id=c,hz=10,seed=3"], sync=settings)
        gateways.append(gateway)
        self.start(gateway, "schema version 99 is newer")
        central.sql("DELETE FROM hrmd.migration WHERE version = 99")
        self.fixed(central, gateway)

        # A database that holds another application's table; then hrmd's database.
        central.add_gateway_role("gw4")
        self.pg.create_database("payroll", owner="gw4")
        self.pg.psql("CREATE TABLE employees (name text)", user="gw4", database="payroll")
        gateway = self.gateway("gw4", self.pg.uri("gw4", None, database="payroll"),
                               sensors=["mock:id=d,hz=10,seed=4"], sync=settings)
        gateways.append(gateway)
        self.start(gateway, "is not hrmd's")
        self.assertEqual(self.pg.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'hrmd'", database="payroll"), "0")
        self.assertEqual(gateway.stop(), 0)
        gateway.write_config(central.url("gw4"), settings)     # pointed at hrmd's database
        gateway.start()
        self.fixed(central, gateway)

        self.check(central, gateways)
