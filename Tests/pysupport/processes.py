"""Child processes of the tests: stopping one with bounded waits, reading its output as it comes,
and waiting for a process that is not ours to end.

    stop_process(process)                        # SIGTERM, SIGKILL after the bound
    output = Output(process.stdout)              # read on a thread of its own, every line kept
    output.wait_for_line("listening", 15)        # the line, or AssertionError with the output
    output.search(re.compile(r"port (\\d+)"), 15) # the match, or None
    output.find(lambda line: line == "ready", 5) # the line, or None
    reader = LineReader(process.stdout)          # or read in the test's own thread,
    reader.line(5)                               # one line at a time, each with a deadline

Every wait has a bound and ends early when what it waits for can no longer come (the output
ended, the process is gone).
"""

import os
import re
import select
import signal
import subprocess
import threading
import time

STOP_TIMEOUT_S = 10


def stop_process(process, timeout=STOP_TIMEOUT_S, sig=signal.SIGTERM):
    """SIG (SIGTERM), then SIGKILL when the process has not ended within TIMEOUT; its exit
    status, or None when it had to be killed."""
    if process.poll() is not None:
        return process.returncode
    process.send_signal(sig)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)
        return None


def wait_gone(pid, timeout):
    """True once process PID (any process, not only a child) has ended; False after TIMEOUT.
    Waits on a pidfd, which becomes readable when the process exits."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([descriptor], [], [], max(0.0, timeout))[0])
    finally:
        os.close(descriptor)


class Output:
    """A child's output (a binary pipe), read line by line on a thread of its own as it comes and
    kept in `lines`; waits for a line. COPY, a text file, gets every line as it is read; CLOSE
    closes the pipe once it ends."""

    def __init__(self, stream, copy=None, close=False):
        self.lines = []
        self.ended = False
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream, copy, close), daemon=True)
        self.thread.start()

    def _read(self, stream, copy, close):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if copy is not None:
                copy.write(line + "\n")
                copy.flush()
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        if close:
            stream.close()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def text(self):
        with self.changed:
            return "\n".join(self.lines)

    def matching(self, needle):
        """The lines so far that contain NEEDLE."""
        with self.changed:
            return [line for line in self.lines if needle in line]

    def join(self, timeout=STOP_TIMEOUT_S):
        """Waits up to TIMEOUT for the output's end (the child closed it, most often by ending)."""
        self.thread.join(timeout)

    def _wait(self, found, timeout):
        """found() under the lock, again at each new line, until it returns something other than
        None, the output ends or TIMEOUT passes; its last value."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                value = found()
                if value is not None:
                    return value
                left = deadline - time.monotonic()
                if left <= 0 or self.ended:
                    return found()
                self.changed.wait(left)

    def find(self, predicate, timeout, count=1):
        """The COUNT-th line so far or within TIMEOUT for which PREDICATE holds, else None."""
        def found():
            matches = [line for line in self.lines if predicate(line)]
            return matches[count - 1] if len(matches) >= count else None
        return self._wait(found, timeout)

    def search(self, pattern, timeout, start=0):
        """The first match of PATTERN (a regular expression) in a line from index START on,
        waiting up to TIMEOUT for it; None when the output ends or the time is up first."""
        pattern = re.compile(pattern) if isinstance(pattern, str) else pattern

        def found():
            for line in self.lines[start:]:
                match = pattern.search(line)
                if match:
                    return match
            return None
        return self._wait(found, timeout)

    def wait_for_line(self, needle, timeout, count=1):
        """The COUNT-th line containing NEEDLE; an AssertionError with the output when it has not
        come within TIMEOUT or the output ended without it."""
        line = self.find(lambda line: needle in line, timeout, count)
        if line is None:
            with self.changed:
                raise AssertionError("no line with %r after %.1f s (%s); output so far:\n%s" % (
                    needle, timeout, "ended" if self.ended else "running", "\n".join(self.lines[-200:])))
        return line


class LineReader:
    """Lines from a pipe (or a descriptor) read in the caller's own thread, each with a deadline."""

    def __init__(self, pipe):
        self.fd = pipe if isinstance(pipe, int) else pipe.fileno()
        self.buffer = b""

    def line(self, timeout):
        """The next line (without its newline), or None at the end of the pipe or after TIMEOUT."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


def log_text(log):
    """Everything written so far to LOG, a file opened w+ that a child writes to: flushed, read
    from its start, stripped."""
    log.flush()
    log.seek(0)
    return log.read().strip()
