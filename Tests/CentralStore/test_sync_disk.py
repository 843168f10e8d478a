"""The PostgreSQL server's disk full: database hrmd in a tablespace on a small tmpfs, filled up
while hrmd syncs. PostgreSQL refuses to extend a table, hrmd says so once and records on; once
the filler is removed it catches up."""

import errno
import os
import subprocess
import tempfile

import postgres
from sync_harness import SyncTest, wait_until

WARNING = "recording goes on locally"


def can_mount_tmpfs():
    """None when this process may mount a tmpfs (root with CAP_SYS_ADMIN), else why not."""
    if os.geteuid() != 0:
        return "mounting a tmpfs for the tablespace needs root"
    scratch = tempfile.mkdtemp(prefix="hrmd-mount-probe-")
    try:
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", scratch], capture_output=True,
                               text=True, timeout=30)
        if mount.returncode != 0:
            return "this machine does not let the tests mount a tmpfs (%s)" % mount.stderr.strip()
        subprocess.run(["umount", scratch], capture_output=True, timeout=30)
        return None
    finally:
        os.rmdir(scratch)


def fill(directory):
    """Writes DIRECTORY/filler until the file system is full; returns its path."""
    path = os.path.join(directory, "filler")
    block = b"\0" * 65536
    with open(path, "wb", buffering=0) as filler:
        while True:
            try:
                filler.write(block)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
    with open(path, "ab", buffering=0) as filler:   # the last bytes a whole block did not fit in
        while True:
            try:
                filler.write(b"\0" * 512)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
    return path


class DiskFullTest(SyncTest):
    def test_server_disk_full_then_freed(self):
        reason = can_mount_tmpfs()
        if reason:
            self.skipTest(reason)
        volume = os.path.join(self.work, "small")
        os.mkdir(volume)
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0755", "tmpfs", volume],
                               capture_output=True, text=True, timeout=30)
        self.assertEqual(mount.returncode, 0, mount.stderr)
        self.addCleanup(subprocess.run, ["umount", "-l", volume], capture_output=True, timeout=30)
        self.addCleanup(self.pg.cleanup)                 # the server gone before the unmount
        space = os.path.join(volume, "pg")
        os.mkdir(space, 0o700)
        os.chown(space, postgres.UNPRIVILEGED_UID, postgres.UNPRIVILEGED_UID) if os.geteuid() == 0 else None
        self.pg.psql("CREATE TABLESPACE small LOCATION '%s'" % space)
        central = self.central(tablespace="small")
        self.assertEqual(central.sql("SELECT count(*) FROM pg_class c JOIN pg_tablespace t ON t.oid = "
                                     "(SELECT dattablespace FROM pg_database WHERE datname = 'hrmd') "
                                     "WHERE c.relname = 'chunk'"), "1")
        central.add_gateway_role("gw1")
        gateway = self.gateway("gw1", central.url("gw1"), sensors=["mock:id=a,hz=50,seed=9", "mock:id=b,hz=50,seed=10"],
                               sync=["batch = 200", "retry-max = 1"])
        gateway.grant()
        gateway.start()
        gateway.wait_for_line("sync: connected")
        wait_until(lambda: central.batches("gw1") >= 3, 20, "three batches", interval=0.05)
        filler = fill(volume)
        line = gateway.wait_for_line(WARNING, 60)
        self.assertRegex(line, "No space left on device|could not extend|disk full")
        recorded = gateway.count()
        wait_until(lambda: gateway.count() >= recorded + 200, 20, "the local store to grow by 200", interval=0.2)
        os.unlink(filler)
        self.caught_up(central, gateway, timeout=60)
        gateway.wait_for_line("sync: caught up", 30)
        # A full disk still takes a batch into page space that pruning freed, now and then; an
        # outage ends only once the sync has caught up, so even that shows one warning, not
        # one per retry (retry-max = 1: a retry a second while the disk is full).
        warnings = gateway.output.matching(WARNING)
        self.assertLessEqual(len(warnings), 2, "one warning per outage, not one per retry:\n" +
                             "\n".join(gateway.output.matching("sync:")))
        self.assertEqual(gateway.stop(), 0)
        self.check(central, [gateway])
