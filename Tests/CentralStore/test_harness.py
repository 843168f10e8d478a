"""The harness the central store's tests stand on: a PostgreSQL of their own
(Tests/pysupport/postgres.py) and a TCP proxy that can go silent or cut
(Tests/pysupport/tcp_proxy.py)."""

import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))

import postgres  # noqa: E402
from ci import require  # noqa: E402
from processes import LineReader as _LineReader  # noqa: E402
from tcp_proxy import TcpProxy  # noqa: E402

PASSWORD = "gateway-Pa55 with 'quotes' & spaces"


class PostgresTest(unittest.TestCase):
    def setUp(self):
        require(postgres.requirements())
        self.pg = postgres.TemporaryPostgres()
        self.addCleanup(self.pg.cleanup)

    def fail_with_log(self, message):
        self.fail("%s\n--- server log ---\n%s" % (message, self.pg.log_tail()))


class ServerTest(PostgresTest):
    def test_start_psql_restart_stop_kill(self):
        pg = self.pg
        self.assertEqual(pg.psql("SHOW server_encoding; SHOW lc_collate; SHOW fsync"), "UTF8\nC\noff")
        self.assertEqual(pg.psql("SHOW listen_addresses"), "127.0.0.1")
        self.assertEqual(pg.psql("SHOW TimeZone"), "UTC")          # the client's PGTZ
        if os.geteuid() == 0:
            self.assertEqual(os.stat(pg.data).st_uid, postgres.UNPRIVILEGED_UID)
        pg.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2)")

        port = pg.port
        pg.restart()
        self.assertEqual(pg.port, port)
        self.assertEqual(pg.psql("SELECT sum(x) FROM t"), "3")

        pg.stop()
        out = pg.psql("SELECT 1", check=False, timeout=20)
        self.assertNotEqual(out.returncode, 0)
        with self.assertRaises(postgres.PostgresError) as raised:
            pg.psql("SELECT 1", timeout=20)
        self.assertIn("database system is shut down", str(raised.exception))   # the log's tail is in it

        pg.start()
        pg.psql("INSERT INTO t VALUES (4)")                  # committed, then a crash
        pg.kill()
        self.assertIsNone(_process_of(pg))
        pg.start()
        self.assertEqual(pg.psql("SELECT sum(x) FROM t"), "7")
        self.assertIn("database system was interrupted", pg.log_tail(200))

        work = pg.dir
        pg.cleanup()
        self.assertFalse(os.path.exists(work))
        self.assertIn("database system is shut down", pg.log_tail())   # still readable

    def test_two_servers_side_by_side(self):
        with postgres.TemporaryPostgres() as other:
            self.assertNotEqual(other.port, self.pg.port)
            self.assertNotEqual(other.dir, self.pg.dir)
            other.psql("CREATE TABLE only_here ()")
            self.assertEqual(self.pg.psql("SELECT count(*) FROM pg_class WHERE relname = 'only_here'"), "0")


class LoginTest(PostgresTest):
    def setUp(self):
        super().setUp()
        self.pg.create_role("gateway", PASSWORD)
        self.pg.create_role("reader", "r", login=False)
        self.pg.create_role("member", "m", in_roles=["reader"])
        self.pg.create_database("central", owner="gateway")

    def test_password_login_over_tcp(self):
        pg = self.pg
        self.assertEqual(pg.psql("SELECT current_user, current_database(), inet_server_port()",
                                 user="gateway", database="central", password=PASSWORD, tcp=True),
                         "gateway|central|%d" % pg.port)
        wrong = pg.psql("SELECT 1", user="gateway", database="central", password="nope", tcp=True, check=False)
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("password authentication failed", wrong.stderr)
        without = pg.psql("SELECT 1", user="gateway", database="central", tcp=True, check=False)
        self.assertNotEqual(without.returncode, 0)
        self.assertEqual(pg.psql("SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'gateway'"), "t")
        self.assertEqual(pg.psql("SELECT pg_has_role('member', 'reader', 'MEMBER'), "
                                 "(SELECT rolcanlogin FROM pg_roles WHERE rolname = 'reader')"), "t|f")

    def test_socket_trust_and_uris(self):
        pg = self.pg
        self.assertEqual(pg.psql("SELECT current_user", user="gateway", database="central"), "gateway")
        socket_uri = pg.uri("gateway", database="central")
        self.assertIn("host=" + pg.socket_dir.replace("/", "%2F"), socket_uri)
        tcp_uri = pg.uri("gateway", PASSWORD, database="central", tcp=True)
        self.assertTrue(tcp_uri.startswith("postgresql://gateway:"), tcp_uri)
        self.assertNotIn(" ", tcp_uri)
        for uri in (socket_uri, tcp_uri):
            out = subprocess.run([pg.psql_bin, "-X", "-At", "-d", uri, "-c", "SELECT current_user"],
                                 capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
            self.assertEqual((out.returncode, out.stdout.strip()), (0, "gateway"), out.stderr)
        argv, env = pg.psql_command("gateway", "central", PASSWORD, tcp=True)
        self.assertNotIn(PASSWORD, " ".join(argv))
        self.assertEqual(env["PGPASSWORD"], PASSWORD)


class ProxyTest(PostgresTest):
    def setUp(self):
        super().setUp()
        self.pg.create_role("gateway", PASSWORD)
        self.proxy = TcpProxy("127.0.0.1", self.pg.port)
        self.addCleanup(self.proxy.close)

    def through_proxy(self, sql, **kwargs):
        return self.pg.psql(sql, user="gateway", password=PASSWORD, port=self.proxy.port, **kwargs)

    def test_blackholed_proxy_makes_a_query_time_out_and_resume_works(self):
        self.assertEqual(self.through_proxy("SELECT inet_server_port()"), str(self.pg.port))
        self.proxy.blackhole()
        argv, env = self.pg.psql_command("gateway", password=PASSWORD, port=self.proxy.port)
        env["PGCONNECT_TIMEOUT"] = "0"           # libpq waits forever; only `timeout` ends it
        started = time.monotonic()
        out = subprocess.run(["timeout", "3"] + argv + ["-c", "SELECT 1"], env=env, capture_output=True,
                             text=True, timeout=30)
        self.assertEqual(out.returncode, 124, out.stderr)  # killed by timeout, not refused or reset
        self.assertLess(time.monotonic() - started, 10)
        self.proxy.resume()
        self.assertEqual(self.through_proxy("SELECT 42", timeout=30), "42")

    def test_a_session_across_a_blackhole_then_a_cut(self):
        argv, env = self.pg.psql_command("gateway", password=PASSWORD, port=self.proxy.port)
        session = subprocess.Popen(argv + ["-f", "-"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        self.addCleanup(_end, session)
        reader = _LineReader(session.stdout)

        def ask(sql):
            session.stdin.write(sql.encode() + b"\n")
            session.stdin.flush()

        ask("SELECT 'one';")
        self.assertEqual(reader.line(15), "one")
        self.proxy.blackhole()
        ask("SELECT 'two';")
        self.assertIsNone(reader.line(1.5))            # silence, and no error either
        self.assertIsNone(session.poll())
        self.assertEqual(self.proxy.connection_count(), 1)
        self.assertEqual(self.pg.psql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'gateway'"), "1")
        self.proxy.resume()
        self.assertEqual(reader.line(15), "two")       # the same connection goes on
        self.proxy.cut()
        ask("SELECT 'three';")
        session.stdin.close()
        try:
            code = session.wait(15)
        except subprocess.TimeoutExpired:
            self.fail("psql still running 15 s after the proxy cut its connection")
        self.assertNotEqual(code, 0)
        self.assertRegex(session.stderr.read().decode(), "closed the connection|reset|terminated|lost")
        self.assertEqual(self.proxy.connection_count(), 0)
        self.assertEqual(self.through_proxy("SELECT 'four'", timeout=30), "four")   # new connections work


def _end(process):
    if process.poll() is None:
        process.kill()
    process.wait(10)
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe and not pipe.closed:
            pipe.close()


def _process_of(pg):
    pid = pg.postmaster_pid()
    return pid if pid and postgres._alive(pid) else None


if __name__ == "__main__":
    unittest.main()
