"""The pages in web/ in headless Chromium against the real hrmd and its HTTP front: the dashboard
follows the store, the overlay is transparent, the group view fits a TV, the day view draws its
charts, and the error states (no token, a rejected or revoked token, the server gone) are said."""

import os
import time
import unittest
from datetime import datetime, timedelta

from harness import (PAGE_TIMEOUT_S, Browser, Hrmd, artifacts_dir, png_pixels, require, requirements,
                     wait_until, write_day_trace)

STRAPS = ["strap-a", "strap-b", "strap-c", "strap-d"]
RESTING = {"strap-a": 58, "strap-b": 66, "strap-c": 84, "strap-d": 120}
FOLLOW_S = 2  # the page shows the store's newest sample within this


def mock(device, bpm, extra=""):
    return "mock:id=%s,bpm=%d,contact-loss=0%s" % (device, bpm, extra)


def replay_history(server, resting, hours):
    """The last HOURS (today's only) of the straps of RESTING, replayed into the store before
    hrmd starts."""
    now = datetime.now().astimezone()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = max(midnight, now - timedelta(hours=hours))
    end = now - timedelta(seconds=1)
    if end <= start:
        return
    path = os.path.join(server.directory, "history.trace.jsonl")
    write_day_trace(path, resting, start, end)
    server.hrmctl("replay", path)


def the_day_so_far(server):
    replay_history(server, RESTING, 5)


class PageTest(unittest.TestCase):
    sensors = []
    before_start = None
    config = ""
    server = None
    browser = None

    @classmethod
    def setUpClass(cls):
        require(requirements())
        cls.server = Hrmd(cls.sensors, name=cls.__name__, before_start=cls.before_start, config=cls.config)
        try:
            cls.browser = Browser()
        except Exception:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.browser:
            cls.browser.quit()
        if cls.server:
            cls.server.stop()

    def tearDown(self):
        errors = self.browser.errors() if self.browser else []
        self.assertEqual(errors, [], "the page logged errors")

    def wait_status(self, state, timeout=PAGE_TIMEOUT_S):
        return wait_until(lambda: self.browser.status()[0] == state and self.browser.status(), timeout,
                          "the status line says %s (it says %r)" % (state, self.browser.status()))

    def assert_follows_store(self, read_page, device):
        """The page's digits equal the store's newest sample of DEVICE within FOLLOW_S."""
        seen = []

        def same():
            newest = self.server.newest(device)
            shown = read_page()
            seen.append((shown, newest and newest["value"]))
            return newest is not None and shown == str(round(newest["value"]))

        wait_until(same, FOLLOW_S, "%s shows the store's newest sample (page, store: %s)" % (device, seen[-5:]))


class Dashboard(PageTest):
    sensors = [mock(device, RESTING[device]) for device in STRAPS]
    before_start = the_day_so_far

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.token = cls.server.token("tester/dash")
        cls.manager = cls.server.token("tester/wall", manager=True)

    def open_dashboard(self, token):
        # Through a blank page: a new token in the fragment alone would not load the page again.
        self.browser.open("about:blank")
        self.browser.open(self.server.url("/#token=" + token))
        wait_until(lambda: sorted(self.browser.tiles()) == STRAPS, PAGE_TIMEOUT_S,
                   "a tile for each strap (%s)" % sorted(self.browser.tiles()))

    def test_tiles_show_the_newest_sample_of_each_strap(self):
        self.open_dashboard(self.token)
        for device in STRAPS:
            self.assert_follows_store(lambda: self.browser.tiles()[device], device)
        zones = self.browser.script("return [...document.querySelectorAll('[data-device]')].map(t => t.dataset.zone)")
        self.assertTrue(all(zone in "012345" for zone in zones), zones)
        self.assertEqual(self.browser.status()[0], "ok")
        stale = self.browser.script("return document.querySelectorAll('.tile.stale').length")
        self.assertEqual(stale, 0, "no tile is stale while its strap streams")
        self.assertEqual(self.browser.script("return document.getElementById('requests-strip').hidden"), True,
                         "a token without --manager sees no authorization requests")

    def test_tiles_keep_following(self):
        self.open_dashboard(self.token)
        first = self.browser.tiles()["strap-d"]
        # the mock changes its rate; within 20 s the digits follow a change in the store
        wait_until(lambda: self.server.newest("strap-d")["value"] != int(first), 20, "strap-d's rate changes")
        self.assert_follows_store(lambda: self.browser.tiles()["strap-d"], "strap-d")

    def test_a_managers_tiles_name_each_straps_wearer(self):
        wearer = STRAPS[0]
        self.addCleanup(self.browser.open, "about:blank")
        self.server.hrmctl("person", "add", "ann")
        self.server.hrmctl("person", "assign", "ann", wearer, "--from", "1h")

        def people():
            return self.browser.script("const r = {}; for (const t of document.querySelectorAll('[data-device]'))"
                                       " r[t.dataset.device] = t.querySelector('.person').textContent; return r;")

        self.open_dashboard(self.manager)
        wait_until(lambda: people().get(wearer) == "ann", PAGE_TIMEOUT_S, "%s's tile names ann (%s)" % (wearer, people()))
        self.assertEqual({device: name for device, name in people().items() if device != wearer}, {d: "" for d in STRAPS[1:]})
        # A token that is not a manager's is never told whose a strap is.
        self.open_dashboard(self.token)
        self.assert_follows_store(lambda: self.browser.tiles()[wearer], wearer)
        self.assertEqual(people(), {d: "" for d in STRAPS})

    def test_manager_sees_authorization_requests_and_the_screenshot(self):
        # hrmd asked to store rr-interval (the mocks send RR intervals) and was not answered
        self.open_dashboard(self.manager)
        text = wait_until(lambda: not self.browser.script("return document.getElementById('requests-strip').hidden")
                          and self.browser.script("return document.getElementById('requests-strip').textContent"),
                          PAGE_TIMEOUT_S, "the strip of authorization requests")
        self.assertIn("rr-interval", text)
        self.assertIn("hrmctl auth grant hrmd rr-interval", text)
        wait_until(lambda: self.browser.script(
            "return [...document.querySelectorAll('canvas.trend')].every(c => c.width > 0)"), PAGE_TIMEOUT_S, "the trends are drawn")
        self.browser.resize(1280, 420)  # the four tiles and the strip, without the empty screen below
        try:
            self.browser.screenshot("dashboard")
        finally:
            self.browser.resize(1280, 720)

    def test_overlay_shows_the_digits_on_a_transparent_background(self):
        self.browser.resize(640, 240)
        self.browser.transparent()
        try:
            self.browser.open(self.server.url("/overlay?device=strap-c#token=" + self.token))
            wait_until(lambda: self.browser.script("return document.getElementById('bpm').textContent").isdigit(),
                       PAGE_TIMEOUT_S, "the overlay shows digits")
            self.assert_follows_store(lambda: self.browser.script("return document.getElementById('bpm').textContent"), "strap-c")
            backgrounds = self.browser.script(
                "return [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.body).backgroundColor]")
            self.assertEqual(backgrounds, ["rgba(0, 0, 0, 0)", "rgba(0, 0, 0, 0)"])
            wait_until(lambda: not self.browser.script("return document.getElementById('overlay').classList.contains('stale')"),
                       PAGE_TIMEOUT_S, "the overlay is live")
            path = self.browser.screenshot("overlay")
            width, height, rows = png_pixels(path)
            self.assertEqual(rows[height - 1][width - 1][3], 0, "the bottom right corner is transparent")
            self.assertEqual(rows[0][width - 1][3], 0, "the top right corner is transparent")
            opaque = sum(1 for row in rows for pixel in row if pixel[3] == 255)
            self.assertGreater(opaque, width * height // 50, "the digits are drawn")
            # the same over a picture, as it shows in a stream (for the documentation)
            self.browser.script("const s = document.documentElement.style; s.minHeight = '100%';"
                                "s.background = 'linear-gradient(120deg, #26445e 0%, #4f6d53 45%, #a0784a 100%)'")
            self.browser.screenshot("overlay-over-a-picture")
        finally:
            self.browser.resize(1280, 720)

    def test_overlay_without_device_follows_the_first_strap(self):
        self.browser.open(self.server.url("/overlay#token=" + self.token))
        wait_until(lambda: self.browser.script("return document.getElementById('bpm').textContent").isdigit(),
                   PAGE_TIMEOUT_S, "the overlay shows digits")

    def test_day_view_draws_the_day(self):
        today = datetime.now().astimezone().strftime("%Y-%m-%d")
        self.browser.open(self.server.url("/day?date=%s#token=%s" % (today, self.token)))
        ready = wait_until(lambda: self.browser.script("return document.body.dataset.ready"), PAGE_TIMEOUT_S * 2,
                           "the day view has loaded")
        self.assertEqual(ready, "true", self.browser.status())
        charts = self.browser.script(
            "return ['chart', 'hourly'].map(id => [document.getElementById(id).querySelectorAll('canvas').length,"
            " Number(document.getElementById(id).dataset.points || 0)])")
        for canvases, points in charts:
            self.assertGreater(canvases, 0, "a chart is drawn")
            self.assertGreater(points, 0, "with points")
        series = int(self.browser.script("return document.getElementById('chart').dataset.series"))
        self.assertEqual(series, len(STRAPS), "a line per strap")
        summary = self.browser.script("return document.getElementById('summary').textContent")
        for word in ("minimum", "average", "maximum"):
            self.assertIn(word, summary)
        rows = self.browser.script("return document.querySelectorAll('#zones tr').length")
        self.assertGreater(rows, 1, "the zones table has rows")
        self.browser.screenshot("day")

    def test_no_token_is_said(self):
        for page in ("/", "/?view=group", "/overlay?device=strap-a", "/day"):
            self.browser.open(self.server.url(page))
            state, text = self.wait_status("no-token")
            self.assertIn("No token", text, page)

    def test_a_wrong_token_is_rejected(self):
        for page in ("/", "/overlay?device=strap-a", "/day"):
            self.browser.open(self.server.url(page + "#token=not-a-token"))
            state, text = self.wait_status("rejected")
            self.assertIn("Token rejected", text, page)

    def test_a_revoked_token_stops_the_page(self):
        token = self.server.token("tester/revoked")
        self.browser.open(self.server.url("/#token=" + token))
        wait_until(lambda: sorted(self.browser.tiles()) == STRAPS, PAGE_TIMEOUT_S, "a tile for each strap")
        self.assert_follows_store(lambda: self.browser.tiles()["strap-d"], "strap-d")
        self.server.revoke_tokens("tester/revoked")
        state, text = self.wait_status("rejected", 10)
        self.assertIn("Token rejected", text)
        frozen = self.browser.tiles()
        before = self.server.newest("strap-d")["start"]
        # the store moves on; the page does not
        wait_until(lambda: self.server.newest("strap-d")["start"] != before, 10, "a newer sample in the store")
        wait_until(lambda: self.server.newest("strap-d")["value"] != int(frozen["strap-d"]), 20,
                   "the store's rate differs from the page's")
        self.assertEqual(self.browser.tiles(), frozen, "the page stopped updating")
        self.assertEqual(self.browser.status()[0], "rejected")


RIDERS = {"rider-%d" % number: 55 + 11 * number for number in range(1, 10)}


def the_last_minutes(server):
    replay_history(server, RIDERS, 0.2)


def grant_high_events(server):
    server.hrmctl("auth", "grant", "hrmd", "high-heart-rate-event")


class EventBanner(PageTest):
    """An open event is a banner on its strap's tile and a band and a line in the day view."""
    sensors = [mock("strap-e", 90, ",hz=4"), mock("strap-f", 60, ",hz=4")]
    before_start = grant_high_events
    # strap-e (90) is over 75 at once: a high event opens after a second; strap-f (60) never.
    config = "[hrmd]\nflush-interval = 0.1\n[alerts]\nhigh = 75\nhigh-for = 1s\nlow = 20\n"

    def banners(self):
        return self.browser.script("const r = {}; for (const t of document.querySelectorAll('[data-device]'))"
                                   " r[t.dataset.device] = [t.dataset.alert || '', t.querySelector('.alert').textContent]; return r;")

    def test_an_open_event_is_a_banner_on_its_tile_and_in_the_day(self):
        manager = self.server.token("tester/events", manager=True)
        self.addCleanup(self.browser.open, "about:blank")
        self.browser.open("about:blank")
        self.browser.open(self.server.url("/#token=" + manager))
        wait_until(lambda: self.banners().get("strap-e", [""])[0] == "high-heart-rate-event", PAGE_TIMEOUT_S,
                   "strap-e's banner (%s)" % self.banners())
        banners = self.banners()
        self.assertTrue(banners["strap-e"][1].startswith("High heart rate · "), banners)
        self.assertIn(" · since ", banners["strap-e"][1])
        self.assertEqual(banners["strap-f"], ["", ""], "no event, no banner")
        wait_until(lambda: self.browser.script(
            "return [...document.querySelectorAll('canvas.trend')].every(c => c.width > 0)"), PAGE_TIMEOUT_S, "the trends are drawn")
        self.browser.resize(1280, 360)
        try:
            self.browser.screenshot("event-banner")
        finally:
            self.browser.resize(1280, 720)
        # A token that may read heart rate but not the event type: its stream sends no event (the
        # open ones would come before the samples that follow), so no banner.
        reader = self.server.token("tester/no-events")
        self.browser.open("about:blank")
        self.browser.open(self.server.url("/#token=" + reader))
        wait_until(lambda: self.browser.script(
            "const t = document.querySelector('[data-device=\"strap-e\"] .bpm'); return t && /^[0-9]+$/.test(t.textContent)"),
            PAGE_TIMEOUT_S, "strap-e's digits for the reader")
        self.assertEqual(self.banners().get("strap-e", ["", ""])[0], "", "an event reached a reader without read authorization")
        # The day view lists the event, over its band on the chart.
        self.browser.open("about:blank")
        self.browser.open(self.server.url("/day#token=" + manager))
        wait_until(lambda: self.browser.script("return document.body.dataset.ready") in ("true", "error"), PAGE_TIMEOUT_S, "the day view")
        self.assertEqual(self.browser.script("return document.body.dataset.ready"), "true")
        listed = self.browser.script("return document.getElementById('events').textContent")
        self.assertIn("high heart rate", listed)
        self.assertIn("strap-e", listed)
        self.assertEqual(int(self.browser.script("return document.getElementById('events').dataset.count")), 1, listed)


class GroupView(PageTest):
    sensors = [mock(device, bpm, ",seed=%d" % number) for number, (device, bpm) in enumerate(RIDERS.items())]
    before_start = the_last_minutes

    def test_group_view_fits_nine_straps_on_a_tv(self):
        token = self.server.token("gym/tv")
        self.browser.open(self.server.url("/?view=group#token=" + token))
        devices = sorted(RIDERS)
        wait_until(lambda: sorted(self.browser.tiles()) == devices and all(v.isdigit() for v in self.browser.tiles().values()),
                   PAGE_TIMEOUT_S, "nine tiles with digits (%s)" % self.browser.tiles())
        self.assert_follows_store(lambda: self.browser.tiles()["rider-5"], "rider-5")
        boxes = self.browser.script(
            "return [...document.querySelectorAll('[data-device]')].map(t => { const r = t.getBoundingClientRect();"
            " return [r.left, r.top, r.right, r.bottom, parseFloat(getComputedStyle(t.querySelector('.bpm')).fontSize)]; })")
        for left, top, right, bottom, digits in boxes:
            self.assertTrue(left >= 0 and top >= 0 and right <= 1280 and bottom <= 720, "a tile within the screen")
            self.assertGreaterEqual(digits, 100, "digits legible across a room (px at 1280×720)")
        background = self.browser.script("return getComputedStyle(document.body).backgroundColor")
        self.assertEqual(background, "rgb(0, 0, 0)")
        wait_until(lambda: self.browser.script(
            "return [...document.querySelectorAll('canvas.trend')].every(c => c.width > 0)"), PAGE_TIMEOUT_S, "the trends are drawn")
        self.browser.screenshot("group")

    def test_group_view_with_one_strap_fills_the_screen(self):
        token = self.server.token("gym/one")
        self.browser.open(self.server.url("/?view=group#token=" + token))
        wait_until(lambda: len(self.browser.tiles()) == 9, PAGE_TIMEOUT_S, "nine tiles")
        # thirty tiles: the grid still fits (tiles added in the page, as more straps would be)
        self.browser.script("""
            const grid = document.getElementById('tiles'), model = grid.firstElementChild;
            for (let i = 10; i <= 30; i++) { const t = model.cloneNode(true); t.dataset.device = 'extra-' + i; grid.append(t); }
            document.dispatchEvent(new CustomEvent('tiles-changed'));""")
        boxes = self.browser.script(
            "return [...document.querySelectorAll('[data-device]')].map(t => { const r = t.getBoundingClientRect();"
            " return [r.right, r.bottom, parseFloat(getComputedStyle(t.querySelector('.bpm')).fontSize)]; })")
        self.assertEqual(len(boxes), 30)
        for right, bottom, digits in boxes:
            self.assertTrue(right <= 1280 and bottom <= 720, "thirty tiles within the screen")
            self.assertGreaterEqual(digits, 40)


class GroupClass(PageTest):
    """A coach runs a class from the group view: its buttons start a workout on every strap,
    lap, pause and resume them, and end the class; the tiles and the class timer follow the
    store through the live stream."""

    sensors = [mock(device, bpm, ",seed=%d" % number) for number, (device, bpm) in enumerate(list(RIDERS.items())[:4])]

    def open_workouts(self):
        out = self.server.hrmctl("workout", "list", "--output", "json").stdout
        return [w for w in map(__import__("json").loads, out.splitlines()) if "end" not in w]

    def workout_states(self):
        return self.browser.script("const r = {}; for (const t of document.querySelectorAll('[data-device]'))"
                                   " r[t.dataset.device] = t.dataset.workout || ''; return r;")

    def click(self, name):
        self.browser.script("document.querySelector('.classbar .class-%s').click()" % name)

    def test_a_class_started_lapped_paused_and_ended_from_the_buttons(self):
        riders = sorted(RIDERS)[:4]
        self.server.hrmctl("person", "add", "ann")
        self.server.hrmctl("person", "assign", "ann", riders[0], "--from", "1h")
        token = self.server.token("gym/coach", manager=True)
        self.browser.open(self.server.url("/?view=group#token=" + token))
        wait_until(lambda: sorted(self.browser.tiles()) == riders, PAGE_TIMEOUT_S, "a tile per rider")
        self.browser.script("const s = document.querySelector('.classbar .activity'); s.value = 'rowing';")
        self.click("start")
        wait_until(lambda: set(self.workout_states().values()) == {"active"}, PAGE_TIMEOUT_S,
                   "every tile's workout active (%s)" % self.workout_states())
        opened = self.open_workouts()
        self.assertEqual(sorted(w["device"] for w in opened), riders)
        self.assertEqual({w["activity"] for w in opened}, {"rowing"})
        self.assertEqual([w.get("person") for w in opened if w["device"] == riders[0]], ["ann"], "the wearer's workout")
        wait_until(lambda: self.browser.script("return document.querySelector('.classbar .class-timer').textContent") != "",
                   PAGE_TIMEOUT_S, "the class timer runs")
        person = self.browser.script("return document.querySelector('[data-device=\"%s\"] .person').textContent" % riders[0])
        self.assertEqual(person, "ann")
        self.click("lap")
        wait_until(lambda: all([e["type"] for e in w["events"]] == ["lap"] for w in self.open_workouts()), PAGE_TIMEOUT_S,
                   "a lap on every workout")
        self.click("pause")
        wait_until(lambda: set(self.workout_states().values()) == {"paused"}, PAGE_TIMEOUT_S, "every workout paused")
        self.assertEqual(self.browser.script("return document.querySelector('.classbar .class-pause').textContent"), "Resume")
        self.browser.screenshot("group-class")
        self.click("pause")
        wait_until(lambda: set(self.workout_states().values()) == {"active"}, PAGE_TIMEOUT_S, "every workout resumed")
        self.click("end")
        wait_until(lambda: set(self.workout_states().values()) == {""}, PAGE_TIMEOUT_S, "no open workout on the tiles")
        self.assertEqual(self.open_workouts(), [])
        self.assertEqual(self.browser.status()[0], "ok", self.browser.status())


def a_rowing_session(server):
    """Twenty minutes of a rower's heart rate ending a minute ago, and ann's workout over it: a
    lap, a pause of two minutes, ended a few seconds before the samples do (the recovery)."""
    now = datetime.now().astimezone().replace(microsecond=0)
    start = now - timedelta(minutes=21)
    path = os.path.join(server.directory, "rowing.trace.jsonl")
    write_day_trace(path, {"rower": 70}, start, now - timedelta(minutes=1), step_s=1)
    server.hrmctl("replay", path)
    server.hrmctl("person", "add", "ann", "--max-hr", "190")
    server.hrmctl("person", "assign", "ann", "rower", "--from", (start - timedelta(hours=1)).isoformat())
    at = lambda minutes: (start + timedelta(minutes=minutes)).isoformat()
    workout = server.hrmctl("workout", "start", "--person", "ann", "--activity", "rowing", "--at", at(1)).stdout.split()[-1]
    for event, minutes in (("lap", 6), ("pause", 9), ("resume", 11)):
        server.hrmctl("workout", event, workout, "--at", at(minutes))
    server.hrmctl("workout", "end", workout, "--at", at(18))
    WorkoutPage.workout = workout
    WorkoutPage.day = (start + timedelta(minutes=1)).strftime("%Y-%m-%d")


class WorkoutPage(PageTest):
    """The workout page draws a workout's figures, its curve with the pause shaded, its zones and
    laps, as the store computes them."""

    sensors = [mock("idle", 60)]
    before_start = a_rowing_session
    workout = None
    day = None

    def test_the_workout_page_shows_the_workouts_figures(self):
        token = self.server.token("coach/page", manager=True)
        self.browser.open(self.server.url("/workout?id=%s#token=%s" % (self.workout, token)))
        wait_until(lambda: self.browser.script("return document.body.dataset.loaded === 'true'"), PAGE_TIMEOUT_S,
                   "the page loads the workout (%s)" % (self.browser.status(),))
        shown = __import__("json").loads(self.server.hrmctl("workout", "show", self.workout, "--output", "json").stdout)
        figures = self.browser.script("const r = {}; for (const f of document.querySelectorAll('#summary .figure'))"
                                      " r[f.dataset.figure] = f.querySelector('.value').textContent; return r;")
        self.assertEqual(figures["average"], "%d bpm" % round(shown["heartRate"]["average"]))
        self.assertEqual(figures["maximum"], "%d bpm" % round(shown["heartRate"]["maximum"]))
        self.assertEqual(figures["active"], "15:00")
        self.assertIn("recoveryOneMinute", shown)
        self.assertEqual(figures["recovery (1 min)"], "%d bpm" % round(shown["recoveryOneMinute"]))
        chart = self.browser.script("const c = document.getElementById('chart'); return [c.dataset.pauses, Number(c.dataset.points)];")
        self.assertEqual(chart[0], "1", "one pause shaded")
        self.assertGreater(chart[1], 900)
        laps = self.browser.script("return [...document.querySelectorAll('#laps tr.lap')].map(r => r.children[1].textContent)")
        self.assertEqual(laps, ["5:00", "10:00"])
        zones = self.browser.script("return [...document.querySelectorAll('#zonebar div')].map(d => Number(d.dataset.zone))")
        self.assertEqual(zones, [zone["zone"] for zone in shown["zones"] if zone["seconds"] > 0])
        self.assertIn("rowing", self.browser.script("return document.getElementById('title').textContent"))
        self.browser.screenshot("workout")

    def test_the_day_view_lists_the_days_workouts_and_links_to_them(self):
        token = self.server.token("coach/day", manager=True)
        self.browser.open(self.server.url("/day?date=%s#token=%s" % (self.day, token)))
        wait_until(lambda: self.browser.script("return document.body.dataset.ready"), PAGE_TIMEOUT_S * 2, "the day view has loaded")
        self.assertEqual(self.browser.script("return document.getElementById('workouts').dataset.count"), "1")
        self.browser.script("document.querySelector('#workouts a.workout-link').click()")
        wait_until(lambda: self.browser.script("return document.body.dataset.loaded === 'true'"), PAGE_TIMEOUT_S,
                   "the link opens the workout page")
        self.assertIn("id=" + self.workout, self.browser.script("return location.href"))


class ServerGone(PageTest):
    sensors = [mock("strap-a", 60)]

    def test_the_page_says_when_the_server_is_unreachable(self):
        token = self.server.token("tester/dash")
        self.browser.open(self.server.url("/#token=" + token))
        wait_until(lambda: self.browser.tiles().get("strap-a", "").isdigit(), PAGE_TIMEOUT_S, "the tile shows digits")
        self.server.stop()
        state, text = self.wait_status("unreachable", 20)
        self.assertIn("Server unreachable", text)
        wait_until(lambda: self.browser.script("return document.querySelectorAll('.tile.stale').length") == 1, 20,
                   "the tile turns stale")


if __name__ == "__main__":
    unittest.main()
