"""Real parts for testing the pages in web/: the built hrmd with mock straps and its HTTP front
(--http 127.0.0.1:0), hrmctl on the same store file, and Debian's headless Chromium driven by
chromedriver through python3-selenium.

    server = Hrmd(["mock:id=strap-a", "mock:id=strap-b"])   # grants, starts, waits for its port
    token = server.token("tester/dash")                      # hrmctl auth token create
    browser = Browser()                                      # headless Chromium, 1280×720
    browser.open(server.url("/#token=" + token))
    wait_until(lambda: browser.script("return …"), 10, "what was awaited")
    browser.screenshot("dashboard")                          # into the test artifacts
    browser.quit(); server.stop()

Every wait is bounded and waits for an event: hrmd's log line, or a condition of the page or the
store polled until it holds (no sleep stands in for one). `requirements()` says
what is missing; `skip_or_fail(reason)` skips a test for it, or fails it when CI=true.
"""

import functools
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pysupport"))

import processes  # noqa: E402
import waiting  # noqa: E402
import builds  # noqa: E402
from builds import REPO, bin_dir  # noqa: E402
from ci import in_ci, require, skip_or_fail  # noqa: E402,F401
from processes import Output  # noqa: E402

WEB = os.path.join(REPO, "web")
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"
START_TIMEOUT_S = 30     # hrmd until it logs its HTTP address
COMMAND_TIMEOUT_S = 30   # one hrmctl run
STOP_TIMEOUT_S = 10      # SIGTERM until SIGKILL
PAGE_TIMEOUT_S = 20      # a page until what it shows is there
LISTENING = re.compile(r"http: listening on (http://127\.0\.0\.1:\d+)")


def artifacts_dir():
    directory = os.environ.get("HRMD_TEST_ARTIFACTS", os.path.join(REPO, ".build", "test-artifacts", "web"))
    os.makedirs(directory, exist_ok=True)
    return directory


_requirements = None


def requirements():
    """None when everything the tests need is here, else what is missing (computed once)."""
    global _requirements
    if _requirements is None:
        _requirements = _find_missing() or ""
    return _requirements or None


def _find_missing():
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return "needs %s (apt-get install %s)" % (path, package)
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "needs python3-selenium"
    if not os.path.exists("/usr/share/javascript/dygraphs/dygraph.min.js"):
        return "needs libjs-dygraphs"
    for tool in ("hrmd", "hrmctl"):
        if not os.access(os.path.join(bin_dir(), tool), os.X_OK):
            return "no %s in %s (build it, or set HRMD_BIN_DIR)" % (tool, bin_dir())
    try:
        help_text = subprocess.run([os.path.join(bin_dir(), "hrmd"), "--help"], capture_output=True, text=True,
                                   timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "hrmd --help did not answer in %d s" % COMMAND_TIMEOUT_S
    if "--http" not in help_text.stdout + help_text.stderr:
        return "%s has no --http yet (the HTTP front is not built into it)" % os.path.join(bin_dir(), "hrmd")
    return None


# Polls PREDICATE every 0.1 s until it returns something true (returned) or TIMEOUT passes (an
# AssertionError naming WHAT); an exception counts as not yet (a page mid-navigation, a process
# mid-write).
wait_until = functools.partial(waiting.wait_until, interval=0.1, retry_on=Exception)

# SIGTERM, then SIGKILL after STOP_TIMEOUT_S; the exit status (None when killed).
stop_process = functools.partial(processes.stop_process, timeout=STOP_TIMEOUT_S)


def utc(moment):
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_day_trace(path, resting, start, end, step_s=5):
    """A trace (docs/recordings.md) from START to END of the devices of RESTING ({device: resting
    rate}): three efforts between rests, a 0x2A37 notification every STEP_S seconds (every second
    in the last ten minutes), contact detected."""
    lines = [json.dumps({"format": "hrmd-trace", "version": 1, "recorder": "hrmd-web-tests"})]
    span = max(1.0, (end - start).total_seconds())
    for device, rest in resting.items():
        lines.append(json.dumps({"t": utc(start), "transport": "mock", "device": device, "kind": "connected"}))
        lines.append(json.dumps({"t": utc(start), "transport": "mock", "device": device, "kind": "read",
                                 "characteristic": "2a00", "value": ("hrmd mock strap " + device).encode().hex()}))
        moment = start
        while moment < end:
            phase = (moment - start).total_seconds() / span
            effort = 0.0
            for centre, width, height in ((0.3, 0.08, 0.55), (0.62, 0.1, 0.75), (0.8, 0.04, 0.9)):
                effort = max(effort, height * max(0.0, 1 - abs(phase - centre) / width))
            wave = 5 * math.sin(moment.timestamp() / 45) + 3 * ((hash((device, moment.timestamp())) % 100) / 100 - 0.5)
            bpm = int(round(rest + (185 - rest) * effort + wave))
            lines.append(json.dumps({"t": utc(moment), "transport": "mock", "device": device, "kind": "notify",
                                     "characteristic": "2a37", "value": "06%02x" % max(40, min(220, bpm))}))
            moment += timedelta(seconds=step_s if end - moment > timedelta(minutes=10) else 1)
    with open(path, "w") as trace:
        trace.write("\n".join(lines) + "\n")


class Hrmd:
    """The built hrmd on a store file of its own with mock straps and its HTTP front on a free
    port; hrmctl on the same file. Its log goes to ARTIFACTS/NAME.log."""

    def __init__(self, sensors, name="hrmd", before_start=None, config=""):
        self.directory = tempfile.mkdtemp(prefix="hrmd-web-")
        self.store = os.path.join(self.directory, "hrmd.sqlite")
        config_path = os.path.join(self.directory, "hrmd.conf")
        with open(config_path, "w") as f:
            f.write(config or "[hrmd]\n")
        self.log_path = os.path.join(artifacts_dir(), name + ".log")
        self.hrmctl("auth", "grant", "hrmd", "heart-rate")
        if before_start:
            before_start(self)
        command = [os.path.join(bin_dir(), "hrmd"), "--store", self.store, "--config", config_path]
        for sensor in sensors:
            command += ["--sensor", sensor]
        command += ["--http", "127.0.0.1:0"]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        self.log = open(self.log_path, "w")
        self.output = Output(self.process.stderr, copy=self.log)
        match = self.output.search(LISTENING, START_TIMEOUT_S)
        if match is None:
            if self.output.ended:
                raise AssertionError("hrmd exited (%s) before listening; its log: %s" % (self.process.wait(), self.log_path))
            self.stop()
            raise AssertionError("hrmd did not log its HTTP address in %d s; its log: %s" % (START_TIMEOUT_S, self.log_path))
        self.base = match.group(1)

    def url(self, path):
        return self.base + path

    def hrmctl(self, *arguments, check=True):
        return builds.hrmctl(*arguments, "--store", self.store, timeout=COMMAND_TIMEOUT_S, check=check)

    def token(self, source, manager=False):
        """A token for SOURCE (USER/APP), which may read heart-rate."""
        self.hrmctl("auth", "grant", source, "heart-rate", "--read")
        result = self.hrmctl("auth", "token", "create", source, *(["--manager"] if manager else []))
        return result.stdout.strip().splitlines()[-1].strip()

    def revoke_tokens(self, source):
        """Revokes every token of SOURCE."""
        self.hrmctl("auth", "token", "revoke", source)

    def newest(self, device):
        """The newest heart-rate sample of DEVICE in the store, as hrmctl prints it (or None)."""
        out = self.hrmctl("samples", "--device", device, "--since", "10m", "--reverse", "--limit", "1",
                          "--output", "json").stdout.strip()
        return json.loads(out.splitlines()[0]) if out else None

    def stop(self):
        status = stop_process(self.process)
        self.output.join(STOP_TIMEOUT_S)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        return status


class Browser:
    """Headless Chromium at WIDTH×HEIGHT CSS pixels, its profile in a temporary directory."""

    def __init__(self, width=1280, height=720):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="hrmd-web-chromium-")
        options = Options()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--hide-scrollbars", "--no-first-run", "--user-data-dir=" + self.profile,
                         "--window-size=%d,%d" % (width, height + 100)):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(PAGE_TIMEOUT_S)
        self.driver.set_script_timeout(PAGE_TIMEOUT_S)
        self.resize(width, height)

    def resize(self, width, height):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def transparent(self):
        """Let a transparent page show as transparent in screenshots (an OBS browser source)."""
        self.driver.execute_cdp_cmd("Emulation.setDefaultBackgroundColorOverride", {"color": {"r": 0, "g": 0, "b": 0, "a": 0}})

    def open(self, url):
        self.driver.get(url)

    def script(self, source, *arguments):
        return self.driver.execute_script(source, *arguments)

    def status(self):
        """The page's status line: (data-state, text)."""
        return tuple(self.script("const s = document.getElementById('status');"
                                 "return s ? [s.dataset.state, s.hidden ? '' : s.textContent] : [null, ''];"))

    def tiles(self):
        """{device: digits} of the dashboard's tiles."""
        return self.script("const r = {}; for (const t of document.querySelectorAll('[data-device]'))"
                           " r[t.dataset.device] = t.querySelector('.bpm').textContent; return r;")

    def screenshot(self, name):
        """The page as a PNG in the test artifacts, once no CSS transition runs; returns its path."""
        wait_until(lambda: self.script("return document.getAnimations().every(a => !(a instanceof CSSTransition))"),
                   PAGE_TIMEOUT_S, "the page's transitions end")
        path = os.path.join(artifacts_dir(), name + ".png")
        with open(path, "wb") as image:
            image.write(self.driver.get_screenshot_as_png())
        return path

    def errors(self):
        """The page's JavaScript errors so far (not the API's expected 401s)."""
        found = []
        for entry in self.driver.get_log("browser"):
            if entry.get("level") == "SEVERE" and entry.get("source") != "network":
                found.append(entry.get("message", ""))
        return found

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)


def png_pixels(path):
    """(width, height, rows of RGBA tuples) of an 8-bit RGB or RGBA PNG, as Chromium writes them."""
    with open(path, "rb") as image:
        data = image.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, chunks, header = 8, [], None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, "unsupported PNG layout"
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append([tuple(line[i:i + channels]) + ((255,) if channels == 3 else ()) for i in range(0, stride, channels)])
        previous = line
    return width, height, rows
