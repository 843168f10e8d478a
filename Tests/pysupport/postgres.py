"""A PostgreSQL server of a test's own: initdb into a fresh temporary directory, started with
pg_ctl on a Unix socket in that directory and a free loopback TCP port, removed at the end.

    with TemporaryPostgres() as pg:                  # initdb + start
        pg.psql("SELECT 1")                          # -> "1" (psql -X -At, as postgres over the socket)
        pg.create_role("hrmd", "pw")                 # LOGIN, SCRAM password
        pg.create_database("central", owner="hrmd")
        pg.psql("SELECT current_user", user="hrmd", database="central", password="pw", tcp=True)
        pg.uri("hrmd", "pw", database="central", tcp=True)   # postgresql://hrmd:pw@127.0.0.1:PORT/central
        pg.restart(); pg.kill(); pg.start()          # a crash (SIGKILL of the postmaster) and recovery

Local (socket) connections are trusted, TCP ones need a SCRAM password; the superuser is
`postgres` with the password SUPERUSER_PASSWORD. PostgreSQL refuses to run as root: as root the
server runs as uid/gid 65534 (setpriv), and the directory is handed to that uid. Every wait is
bounded (pg_ctl -w -t 30, a timeout on every process). The server log stays readable while the
server runs and after cleanup (`log_tail()`), for failure messages.

The binaries: `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin; psql is
/usr/bin/psql when it is there.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse

import processes
from sockets import free_port

SUPERUSER_PASSWORD = "postgres-test-superuser"
UNPRIVILEGED_UID = 65534
START_TIMEOUT_S = 30
COMMAND_TIMEOUT_S = 120


class PostgresError(RuntimeError):
    pass


def bin_dir():
    """The directory of initdb, pg_ctl and postgres, or None."""
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, timeout=10)
        path = out.stdout.strip()
        if out.returncode == 0 and os.access(os.path.join(path, "initdb"), os.X_OK):
            return path
    except (OSError, subprocess.TimeoutExpired):
        pass

    def version(path):
        return [int(part) for part in re.findall(r"\d+", path.split("/")[-2])]

    for path in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if os.access(os.path.join(path, "initdb"), os.X_OK):
            return path
    return None


def psql_path(bindir=None):
    if os.access("/usr/bin/psql", os.X_OK):
        return "/usr/bin/psql"
    if bindir and os.access(os.path.join(bindir, "psql"), os.X_OK):
        return os.path.join(bindir, "psql")
    return shutil.which("psql")


def requirements():
    """None when a server can be started here, else what is missing."""
    bindir = bin_dir()
    if not bindir:
        return "needs PostgreSQL's server binaries (Debian package postgresql)"
    if not psql_path(bindir):
        return "needs psql (Debian package postgresql-client)"
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        return "needs setpriv (Debian package util-linux) to run PostgreSQL as uid 65534"
    return None


def quote_ident(name):
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text):
    return "'" + text.replace("'", "''") + "'"


class TemporaryPostgres:
    def __init__(self, prefix="hrmd-pg-", options=None, start=True):
        """`options`: extra server settings (name -> value), passed as -c name=value."""
        self.bindir = bin_dir()
        if not self.bindir:
            raise PostgresError(requirements())
        self.psql_bin = psql_path(self.bindir)
        self.options = dict(options or {})
        self.as_root = os.geteuid() == 0
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.data = os.path.join(self.dir, "data")
        self.socket_dir = self.dir
        self.log_path = os.path.join(self.dir, "postgres.log")
        self.port = None
        self.running = False
        self._last_log = ""
        try:
            if self.as_root:
                os.chown(self.dir, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
            os.chmod(self.dir, 0o700)
            self._initdb()
            if start:
                self.start()
        except BaseException:
            self.cleanup()
            raise

    # -- the server's processes --------------------------------------------------------------

    def _server_command(self, argv):
        program = [os.path.join(self.bindir, argv[0])] + argv[1:]
        if self.as_root:
            return ["setpriv", "--reuid=%d" % UNPRIVILEGED_UID, "--regid=%d" % UNPRIVILEGED_UID,
                    "--clear-groups"] + program
        return program

    def _run_server_tool(self, argv, timeout):
        env = dict(os.environ, LC_ALL="C", LANG="C")
        env.pop("PGDATA", None)
        try:
            out = subprocess.run(self._server_command(argv), cwd=self.dir, env=env, stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise PostgresError("%s did not finish in %d s\n%s" % (argv[0], timeout, self.log_tail()))
        return out

    def _initdb(self):
        pwfile = os.path.join(self.dir, "pwfile")
        with open(pwfile, "w") as f:
            f.write(SUPERUSER_PASSWORD + "\n")
        if self.as_root:
            os.chown(pwfile, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        os.chmod(pwfile, 0o600)
        out = self._run_server_tool(
            ["initdb", "-D", self.data, "-U", "postgres", "--pwfile=" + pwfile, "--auth-local=trust",
             "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"], COMMAND_TIMEOUT_S)
        os.unlink(pwfile)
        if out.returncode != 0:
            raise PostgresError("initdb failed (%d):\n%s%s" % (out.returncode, out.stdout, out.stderr))

    def _server_options(self):
        settings = {"port": str(self.port), "unix_socket_directories": self.socket_dir,
                    "listen_addresses": "127.0.0.1", "fsync": "off"}
        settings.update({k: str(v) for k, v in self.options.items()})
        # pg_ctl hands -o to a shell: each value is quoted for it, and for PostgreSQL's parser.
        parts = []
        for name, value in settings.items():
            parts.append("-c " + _shell_quote("%s=%s" % (name, value)))
        return " ".join(parts)

    def start(self):
        """Starts the server (a new free port the first time, the same one after) and waits for it."""
        if self.running:
            return
        attempts = 3 if self.port is None else 1
        for attempt in range(attempts):
            if self.port is None or attempt > 0:
                self.port = free_port()
            out = self._run_server_tool(
                ["pg_ctl", "-D", self.data, "-l", self.log_path, "-w", "-t", str(START_TIMEOUT_S),
                 "-o", self._server_options(), "start"], START_TIMEOUT_S + 15)
            if out.returncode == 0:
                self.running = True
                return
            if "could not bind" not in self._read_log() and "in use" not in self._read_log():
                break
        raise PostgresError("pg_ctl start failed (%d):\n%s%s\n%s"
                            % (out.returncode, out.stdout, out.stderr, self.log_tail()))

    def stop(self, mode="fast"):
        """Stops the server (pg_ctl stop -m smart|fast|immediate) and waits for it to be gone."""
        if not self.running:
            return
        out = self._run_server_tool(["pg_ctl", "-D", self.data, "-m", mode, "-w", "-t",
                                     str(START_TIMEOUT_S), "stop"], START_TIMEOUT_S + 15)
        if out.returncode != 0:
            raise PostgresError("pg_ctl stop failed (%d):\n%s%s\n%s"
                                % (out.returncode, out.stdout, out.stderr, self.log_tail()))
        self.running = False

    def restart(self, mode="fast"):
        self.stop(mode)
        self.start()

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            return None

    def kill(self, timeout=START_TIMEOUT_S):
        """SIGKILLs the postmaster, a crash; waits until it and its children are gone (the
        backends exit when they notice the postmaster died). start() then recovers."""
        pid = self.postmaster_pid()
        if pid is None or not _alive(pid):
            self.running = False
            return
        children = _children(pid)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + timeout
        for process in [pid] + children:
            if not processes.wait_gone(process, deadline - time.monotonic()):
                raise PostgresError("process %d still alive %d s after SIGKILL of the postmaster"
                                    % (process, timeout))
        # The postmaster is not our child: until its new parent reaps it, it stays a zombie, and a
        # zombie's pid in postmaster.pid and the socket's lock file makes the next start refuse.
        # Every process of the server is gone by now, so the lock files are stale and can go.
        for lock in [os.path.join(self.data, "postmaster.pid")] + glob.glob(
                os.path.join(self.socket_dir, ".s.PGSQL.*.lock")):
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass
        self.running = False

    # -- clients -----------------------------------------------------------------------------

    def uri(self, user="postgres", password=None, database="postgres", tcp=False, port=None):
        """A libpq URI: over TCP to 127.0.0.1 (`port` overrides the server's, e.g. a proxy's),
        or over the Unix socket (its directory in the host= query parameter, percent-encoded)."""
        auth = urllib.parse.quote(user, safe="")
        if password is not None:
            auth += ":" + urllib.parse.quote(password, safe="")
        db = urllib.parse.quote(database, safe="")
        if tcp or port is not None:
            return "postgresql://%s@127.0.0.1:%d/%s" % (auth, port or self.port, db)
        return "postgresql://%s@/%s?host=%s&port=%d" % (
            auth, db, urllib.parse.quote(self.socket_dir, safe=""), self.port)

    def psql_command(self, user="postgres", database="postgres", password=None, tcp=False, port=None):
        """(argv, env) for psql -X -At -v ON_ERROR_STOP=1 against this server; the password is in
        the environment (PGPASSWORD) only, never in argv."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(PGTZ="UTC", PGCONNECT_TIMEOUT="10", LC_ALL="C")
        if password is not None:
            env["PGPASSWORD"] = password
        argv = [self.psql_bin, "-X", "-At", "-v", "ON_ERROR_STOP=1",
                "-d", self.uri(user, None, database, tcp=tcp, port=port)]
        return argv, env

    def psql(self, sql, user="postgres", database="postgres", password=None, check=True, tcp=False,
             port=None, timeout=COMMAND_TIMEOUT_S, stdin=None):
        """Runs `sql` (psql -c; several statements allowed) and returns its output, stripped.
        check=True raises PostgresError on a non-zero exit, with psql's error and the log's tail."""
        argv, env = self.psql_command(user, database, password, tcp, port)
        try:
            out = subprocess.run(argv + ["-c", sql], env=env, capture_output=True, text=True,
                                 timeout=timeout, stdin=stdin if stdin is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise PostgresError("psql did not finish in %s s: %s" % (timeout, sql[:200]))
        if check and out.returncode != 0:
            raise PostgresError("psql failed (%d) on %s:\n%s%s" % (out.returncode, sql[:200], out.stderr,
                                                                   self.log_tail(20)))
        return out.stdout.strip() if check else out

    def create_role(self, name, password, login=True, in_roles=()):
        sql = "CREATE ROLE %s %s PASSWORD %s" % (quote_ident(name), "LOGIN" if login else "NOLOGIN",
                                                 quote_literal(password))
        if in_roles:
            sql += " IN ROLE " + ", ".join(quote_ident(r) for r in in_roles)
        self.psql(sql)

    def create_database(self, name, owner="postgres"):
        self.psql("CREATE DATABASE %s OWNER %s" % (quote_ident(name), quote_ident(owner)))

    # -- the log and the end -----------------------------------------------------------------

    def _read_log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                self._last_log = f.read()
        except OSError:
            pass
        return self._last_log

    def log_tail(self, lines=40):
        """The last lines of the server's log (kept after cleanup)."""
        text = self._read_log()
        return "\n".join(text.splitlines()[-lines:])

    def cleanup(self):
        """Stops the server (fast, else immediate, else SIGKILL) and removes the directory."""
        if os.path.isdir(self.data if hasattr(self, "data") else ""):
            for action in (lambda: self.stop("fast"), lambda: self.stop("immediate"), self.kill):
                try:
                    action()
                    break
                except PostgresError:
                    self.running = True
            self._read_log()
        if getattr(self, "dir", None):
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False


def _shell_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def _alive(pid):
    """True while `pid` exists and is not a zombie (the postmaster is not our child)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return found
