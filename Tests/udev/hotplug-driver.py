#!/usr/bin/python3
"""Plays udev for hrmd's hot-plug tests: fake tty devices in a umockdev testbed, plugged in
and out while the real program runs.

Run it under umockdev-wrapper (LD_PRELOAD) so the program it starts sees the testbed:

  umockdev-wrapper /usr/bin/python3 hotplug-driver.py discovery PROBE
  umockdev-wrapper /usr/bin/python3 hotplug-driver.py serial HRMD STORE LOGFILE
  umockdev-wrapper /usr/bin/python3 hotplug-driver.py ant HRMD STORE LOGFILE STICK_TTY

It prints what happened, one line per step, and exits 0; on a step that did not happen in
time it says which on stderr and exits 1. Every wait is bounded.
"""

import os
import select
import signal
import subprocess
import sys
import time

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import GLib, UMockdev  # noqa: E402

STEP_TIMEOUT = 10.0


def pump(seconds):
    """Lets the testbed answer ioctls (GLib's default context) for `seconds`: each ioctl as it
    comes, asleep in the main loop in between."""
    context = GLib.MainContext.default()
    deadline = time.monotonic() + seconds
    while True:
        while context.pending():
            context.iteration(False)
        left = deadline - time.monotonic()
        if left <= 0:
            return
        alarm = GLib.timeout_source_new(max(1, int(left * 1000)))
        alarm.set_callback(lambda *_: False)
        alarm.attach(context)
        context.iteration(True)  # until an ioctl (or anything else of the context) or the deadline
        alarm.destroy()


class PassThroughIoctls(UMockdev.IoctlBase):
    """A tty's ioctls, all run for real on the program's own descriptor (a pty). umockdev's
    default passes only termios through and refuses the rest (TIOCEXCL among them)."""

    def do_handle_ioctl(self, client):
        result, error = client.execute()
        client.complete(result, error)
        return True


class StepFailed(Exception):
    pass


class Bench:
    """A umockdev testbed with tty devices that can be plugged and unplugged."""

    def __init__(self):
        self.testbed = UMockdev.Testbed.new()
        self.syspaths = {}
        self.ioctls = PassThroughIoctls()

    @property
    def environment(self):
        return dict(os.environ, UMOCKDEV_DIR=self.testbed.get_root_dir())

    def plug(self, name, node=None, **properties):
        """Adds /dev/NAME (a pty, or the tty at `node`) with these udev properties; a running
        testbed sends 'add'."""
        devpath = "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/%s/tty/%s" % (name, name)
        lines = ["P: " + devpath, "N: " + name, "E: SUBSYSTEM=tty", "E: DEVNAME=/dev/" + name]
        lines += ["E: %s=%s" % item for item in properties.items()]
        if not self.testbed.add_from_string("\n".join(lines) + "\n"):
            raise StepFailed("umockdev refused " + name)
        self.testbed.attach_ioctl("/dev/" + name, self.ioctls)
        self.syspaths[name] = "/sys" + devpath
        if node:
            link = os.path.join(self.testbed.get_root_dir(), "dev", name)
            os.unlink(link)
            os.symlink(node, link)

    def unplug(self, name):
        """Sends 'remove'. The device stays in the testbed (umockdev cannot make a node of the
        same name twice), so its pty stays open and `replug` can bring it back."""
        self.testbed.uevent(self.syspaths[name], "remove")

    def replug(self, name):
        """Sends 'add' again for an unplugged device."""
        self.testbed.uevent(self.syspaths[name], "add")

    def terminal(self, name):
        """The pty end that plays the device."""
        return self.testbed.get_dev_fd("/dev/" + name)


class LineReader:
    """Lines of a child's stdout, waited for with a bound."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.buffer = b""
        self.lines = []

    def wait_for(self, text, timeout=STEP_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            for line in self.lines:
                if text in line:
                    self.lines.remove(line)
                    return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise StepFailed("no line with %r in %.0f s" % (text, timeout))
            pump(0)
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.05))
            if ready:
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    raise StepFailed("the program ended before printing %r" % text)
                self.buffer += chunk
                *complete, self.buffer = self.buffer.split(b"\n")
                self.lines += [line.decode() for line in complete]


class LogFile:
    """A log file a child writes, waited on for a line."""

    def __init__(self, path):
        self.path = path
        self.seen = 0

    def wait_for(self, text, timeout=STEP_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.path, errors="replace") as log:
                lines = log.read().splitlines()
            for index in range(self.seen, len(lines)):
                if text in lines[index]:
                    self.seen = index + 1
                    return lines[index]
            pump(0.05)
        raise StepFailed("no log line with %r in %.0f s" % (text, timeout))


def say(text):
    print(text, flush=True)


def discovery(probe):
    """Start-up enumeration and the monitor, seen through hotplug-probe."""
    bench = Bench()
    bench.plug("ttyUSB0", ID_VENDOR_ID="0fcf", ID_MODEL_ID="1008", HRMD_SENSOR="ant", ID_SERIAL_SHORT="123")
    bench.plug("ttyUSB1", ID_VENDOR_ID="0fcf", ID_MODEL_ID="1004")  # no rules installed
    bench.plug("ttyUSB2", ID_VENDOR_ID="2341", ID_MODEL_ID="0043")  # nobody's sensor
    child = subprocess.Popen([probe, "30"], env=bench.environment, stdout=subprocess.PIPE)
    try:
        out = LineReader(child.stdout)
        say(out.wait_for("added ant /dev/ttyUSB0"))
        say(out.wait_for("added ant /dev/ttyUSB1"))
        say(out.wait_for("scanned"))
        bench.plug("ttyACM0", HRMD_SENSOR="serial", HRMD_BAUD="9600")
        say(out.wait_for("added serial /dev/ttyACM0"))
        bench.unplug("ttyUSB0")
        say(out.wait_for("removed /sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/ttyUSB0/tty/ttyUSB0"))
        bench.replug("ttyUSB0")
        say(out.wait_for("added ant /dev/ttyUSB0 0fcf:1008"))
        strays = [line for line in out.lines if "ttyUSB2" in line]
        say("ttyUSB2 " + ("reported: " + " | ".join(strays) if strays else "ignored"))
    finally:
        end(child)


def feed(bench, name, text, seconds):
    """Writes `text` lines to the device end of /dev/NAME for `seconds`, a few a second."""
    terminal = bench.terminal(name)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        os.write(terminal, text.encode() + b"\n")
        pump(0.2)


def serial(hrmd, store, log_path):
    """hrmd --sensor serial (and a mock strap beside it): a sensor present at start-up
    streams, is released when unplugged and taken again when plugged back in."""
    bench = Bench()
    bench.plug("ttyACM0", HRMD_SENSOR="serial", ID_VENDOR_ID="2341", ID_MODEL_ID="0043")
    with open(log_path, "w") as log:
        child = subprocess.Popen(
            [hrmd, "--store", store, "--sensor", "serial", "--sensor", "mock:hz=4", "--log-level", "debug"],
            env=bench.environment, stdout=log, stderr=subprocess.STDOUT)
    try:
        log = LogFile(log_path)
        say(log.wait_for("serial sensor /dev/ttyACM0 added"))
        log.wait_for("opened /dev/ttyACM0")
        feed(bench, "ttyACM0", "HR 72", 2.5)
        say("fed HR 72")
        bench.unplug("ttyACM0")
        say(log.wait_for("serial sensor /dev/ttyACM0 removed"))
        pump(1.5)
        hrmctl = os.path.join(os.path.dirname(hrmd), "hrmctl")
        devices = subprocess.run(
            [hrmctl, "devices", "--store", store, "--output", "json"],
            capture_output=True, text=True, timeout=STEP_TIMEOUT).stdout
        say("while unplugged: " + " ".join(line for line in devices.splitlines() if "serial-ttyACM0" in line))
        plugged = time.monotonic()
        bench.replug("ttyACM0")
        say(log.wait_for("serial sensor /dev/ttyACM0 added"))
        log.wait_for("opened /dev/ttyACM0")
        say("taken again in %.2f s" % (time.monotonic() - plugged))
        feed(bench, "ttyACM0", "HR 81 RR 741", 2.5)
        say("fed HR 81")
        stop(child)
    finally:
        end(child)


def end(child):
    """SIGKILL, unless it has ended already, and a bounded wait for it."""
    if child.poll() is None:
        child.kill()
    child.wait(timeout=5)


def stop(child):
    """SIGTERM, then a bounded wait; says how hrmd ended."""
    child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STEP_TIMEOUT
    while child.poll() is None and time.monotonic() < deadline:
        pump(0.05)
    status = child.poll()
    if status is None:
        raise StepFailed("hrmd did not stop within %.0f s of SIGTERM" % STEP_TIMEOUT)
    say("hrmd exit %d" % status)


def ant(hrmd, store, log_path, stick):
    """hrmd --sensor ant: an ANTUSB2 stick (the tty at `stick`, where a fake stick answers)
    present at start-up streams, is released when unplugged and set up again when replugged."""
    bench = Bench()
    bench.plug("ttyUSB0", node=stick, ID_VENDOR_ID="0fcf", ID_MODEL_ID="1008", HRMD_SENSOR="ant", ID_SERIAL_SHORT="123456")
    with open(log_path, "w") as log:
        child = subprocess.Popen(
            [hrmd, "--store", store, "--sensor", "ant", "--log-level", "debug"],
            env=bench.environment, stdout=log, stderr=subprocess.STDOUT)
    try:
        log = LogFile(log_path)
        say(log.wait_for("ANT stick /dev/ttyUSB0 added"))
        log.wait_for("opened /dev/ttyUSB0")
        pump(3)
        bench.unplug("ttyUSB0")
        say(log.wait_for("ANT stick /dev/ttyUSB0 removed"))
        pump(1)
        say("replugged at %.3f" % time.time())
        plugged = time.monotonic()
        bench.replug("ttyUSB0")
        say(log.wait_for("ANT stick /dev/ttyUSB0 added"))
        log.wait_for("opened /dev/ttyUSB0")
        say("taken again in %.2f s" % (time.monotonic() - plugged))
        pump(3)
        stop(child)
    finally:
        end(child)


def main(arguments):
    scenarios = {"discovery": discovery, "serial": serial, "ant": ant}
    if not arguments or arguments[0] not in scenarios:
        sys.exit("usage: hotplug-driver.py discovery PROBE | serial HRMD STORE LOGFILE | ant HRMD STORE LOGFILE STICK_TTY")
    try:
        scenarios[arguments[0]](*arguments[1:])
    except StepFailed as failure:
        print("hotplug-driver: " + str(failure), file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
