"""GET /api/v1/samples pages: followed from cursor to cursor they give exactly what `hrmctl
samples --output json` gives for the same range (nothing lost, nothing twice, the same keys in
the same order), and a cursor no page gave is a 400."""

import json
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402


def rfc3339(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03dZ" % int((seconds % 1) * 1000)


class PagingTests(front.FrontTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Three straps at 20 Hz: many samples, some of them starting in the same millisecond.
        cls.hrmd = front.Hrmd(None, sensors=["mock:id=p1,hz=20", "mock:id=p2,hz=20,bpm=80", "mock:id=p3,hz=20,bpm=90"])
        cls.addClassCleanup(cls.hrmd.stop)
        cls.token, _ = cls.hrmd.token("root/pager", manager=True)
        cls.since = rfc3339(time.time() - 600)
        if not front.wait_for(lambda: len(cls.hrmd.stored("--since", cls.since)) >= 300, 60):
            raise AssertionError("hrmd did not store 300 samples within 60 s:\n" + cls.hrmd.output()[-2000:])
        # A range that is complete now: it ends before the newest stored sample.
        cls.until = cls.hrmd.stored("--since", cls.since)[-1]["start"]

    def pages(self, limit, **extra):
        query = {"since": self.since, "until": self.until, "limit": str(limit)}
        query.update(extra)
        samples, cursor, count = [], None, 0
        while True:
            if cursor is not None:
                query["cursor"] = cursor
            answer = self.hrmd.get("/api/v1/samples?" + urllib.parse.urlencode(query), self.token)
            self.assertEqual(answer.status, 200, answer)
            self.assertEqual(list(answer.json.keys()), ["samples", "next"])
            self.assertLessEqual(len(answer.json["samples"]), limit if limit else 10000)
            samples += answer.json["samples"]
            cursor = answer.json["next"]
            count += 1
            if cursor is None:
                return samples, count
            self.assertLess(count, 10_000, "paging does not end")

    def expected(self, *extra):
        _, out, _ = front.hrmctl("samples", "--store", self.hrmd.store, "--output", "json", "--since", self.since,
                                 "--until", self.until, *extra, timeout=60)
        return [json.loads(line, object_pairs_hook=list) for line in out.splitlines() if line.strip()]

    def as_pairs(self, samples):
        return [json.loads(json.dumps(sample), object_pairs_hook=list) for sample in samples]

    def test_pages_equal_hrmctl(self):
        expected = self.expected()
        self.assertGreaterEqual(len(expected), 200)
        for limit in (1, 7, 100, 0):
            with self.subTest(limit=limit):
                samples, count = self.pages(limit)
                self.assertEqual(len(samples), len(expected), "pages of %d: %d samples, hrmctl %d" % (limit, len(samples), len(expected)))
                # Same objects, same keys in the same order (the JSON text's order, not just the values).
                self.assertEqual(self.as_pairs(samples), expected)
                if limit:
                    self.assertLessEqual(count, len(expected) // limit + 1, "pages of %d" % limit)

    def test_pages_of_one_device(self):
        expected = self.expected("--device", "p2")
        samples, _ = self.pages(13, device="p2")
        self.assertEqual(self.as_pairs(samples), expected)
        self.assertEqual({sample["device"]["identifier"] for sample in samples}, {"p2"})

    def test_pages_of_two_oldest_first(self):
        # Pages of two end inside groups of samples that start in the same millisecond (the
        # straps run in step), and still give what hrmctl gives, oldest first.
        samples, _ = self.pages(2)
        self.assertEqual(self.as_pairs(samples), self.expected())
        starts = [s["start"] for s in samples]
        self.assertEqual(starts, sorted(starts), "pages are not oldest first")

    def test_garbage_cursors(self):
        for cursor in ("abc", "1.0", "1", ".", "1.2.3", "-1.-1", "99999999999999999999.1", "1." + "9" * 30, "",
                       "%00", "1.999999999", " 1.1"):
            with self.subTest(cursor=cursor):
                answer = self.hrmd.get("/api/v1/samples?cursor=" + urllib.parse.quote(cursor), self.token)
                self.assertError(answer, 400)
        # A cursor before the range.
        answer = self.hrmd.get("/api/v1/samples?since=%s&cursor=1.1" % urllib.parse.quote(self.since), self.token)
        self.assertError(answer, 400, "cursor")
        self.assertTrue(self.hrmd.answers(self.token))

    def test_extreme_cursors_answer(self):
        # Well-formed cursors far outside the years a store holds: an empty page or a 400, never a failure.
        for cursor in ("-9223372036854775808.1", "9223372036854775807.1", "-62135596800000001.1", "253402300800000000.5"):
            with self.subTest(cursor=cursor):
                answer = self.hrmd.get("/api/v1/samples?cursor=" + cursor, self.token)
                self.assertIn(answer.status, (200, 400), answer)
                if answer.status == 200:
                    self.assertEqual(answer.json, {"samples": [], "next": None})
                else:
                    self.assertError(answer, 400)
        self.assertTrue(self.hrmd.answers(self.token), "hrmd stopped answering:\n" + self.hrmd.output()[-2000:])
