#!/usr/bin/python3
"""The central store's samples in PostgreSQL: two candidate shapes against what a PostgreSQL
user would make, on a PostgreSQL of the benchmark's own (Tests/pysupport/postgres.py).

    make bench-central-shape                 # = /usr/bin/python3 bench/central-shape.py
    CENTRAL_SHAPE_DAYS=7 /usr/bin/python3 bench/central-shape.py --json out.json

Two data sets, each in a database of its own:
- month: a gym's month: 20 straps, 2 h a day at 1 Hz (30 days, 4.32M samples);
- burst: 20 straps at 4 Hz for 1 h (288 000 samples).
Heart rates are a smooth session curve between 60 and 180 with noise, stored as whole bpm;
timestamps are 1/Hz apart with up to ±800 µs of jitter. Rows arrive in time order, every strap
interleaved, as gateways would sync them.

The shapes:
- PEER: CREATE TABLE hr (device int, t timestamptz, bpm double precision) and an index on
  (device, t), loaded with COPY;
- A (rows): hrmd_rows(gateway, device, type, t, value, anchor), partitioned by month on t, a
  BRIN index on t, loaded with COPY (a BRIN on device and a btree on (device, t) are measured
  as variants);
- B (chunks): one row per (device, hour) chunk of at most 1024 samples, with count, min, max and
  sum, and the starts (µs since the epoch), values and anchors as arrays; a btree on (device_id,
  type, last_start), and the view samples_b that unnests the chunks into rows.

It prints, and writes as JSON (default .build/bench-central-shape.json): bytes per sample
(pg_total_relation_size of the tables and their indexes after VACUUM ANALYZE, over the samples),
and the best of CENTRAL_SHAPE_RUNS (5) timings, after one warm-up, from psql's \\timing: per-day
statistics over the whole set, one device's one day of samples in order, the count of samples;
each with its ratio to PEER. The session time zone is UTC. The answers of the shapes are checked
to agree. Also: how the chunks' arrays are stored (pg_column_size, TOAST compression).
"""

import argparse
import datetime
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "Tests", "pysupport"))

import postgres  # noqa: E402

STRAPS = int(os.environ.get("CENTRAL_SHAPE_STRAPS", "20"))
DAYS = int(os.environ.get("CENTRAL_SHAPE_DAYS", "30"))
RUNS = int(os.environ.get("CENTRAL_SHAPE_RUNS", "5"))
CHUNK_MAX = 1024
EPOCH_START = datetime.datetime(2025, 4, 1, tzinfo=datetime.timezone.utc)
GATEWAY = 1
HEART_RATE = 1          # A's smallint type
HEART_RATE_NAME = "heart-rate"
QUERY_DEVICE = 7


# -- the data ----------------------------------------------------------------------------------

def session_curve(rng, n):
    """n heart rates of one session: warm-up, intervals, cool-down; whole bpm in [60, 180]."""
    rest = rng.uniform(60, 75)
    work = rng.uniform(130, 155)
    swing = rng.uniform(12, 25)
    intervals = rng.uniform(5, 9)
    phase = rng.uniform(0, 2 * math.pi)
    drift = 0.0
    out = []
    for i in range(n):
        x = i / n
        if x < 0.12:
            base = rest + (work - rest) * (0.5 - 0.5 * math.cos(math.pi * x / 0.12))
        elif x < 0.88:
            base = work + swing * math.sin(2 * math.pi * intervals * (x - 0.12) / 0.76 + phase)
        else:
            base = work + (rest + 20 - work) * (0.5 - 0.5 * math.cos(math.pi * (x - 0.88) / 0.12))
        drift = 0.995 * drift + rng.gauss(0, 0.3)       # slow wander, then beat-to-beat noise
        out.append(int(round(min(180, max(60, base + drift + rng.gauss(0, 1.5))))))
    return out


def generate(days, straps, hz, session_s, start_hour, max_offset_s, seed):
    """Samples as (t_us, device, bpm), time-ordered, one list per day."""
    rng = random.Random(seed)
    start_us = int(EPOCH_START.timestamp()) * 1_000_000
    step = 1_000_000 // hz
    for day in range(days):
        samples = []
        for device in range(1, straps + 1):
            n = session_s * hz
            first = start_us + (day * 86400 + start_hour * 3600 + rng.randrange(max_offset_s + 1)) * 1_000_000
            bpms = session_curve(rng, n)
            for i in range(n):
                samples.append((first + i * step + rng.randint(-800, 800), device, bpms[i]))
        samples.sort()
        yield samples


class Timestamps:
    """µs since the epoch as PostgreSQL's timestamptz text, UTC; the date and time once per second."""

    def __init__(self):
        self.second = None
        self.text = None

    def __call__(self, t_us):
        second, micro = divmod(t_us, 1_000_000)
        if second != self.second:
            self.second = second
            self.text = datetime.datetime.fromtimestamp(second, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        return "%s.%06d+00" % (self.text, micro)


def write_files(work, days_of_samples):
    """The three COPY files; returns their paths, the sample count and the range of t."""
    stamp = Timestamps()
    paths = {name: os.path.join(work, name + ".copy") for name in ("peer", "rows", "chunks")}
    anchor = 0
    count = 0
    chunk_rows = []
    anchor_rng = random.Random(99)
    first_us = last_us = None
    with open(paths["peer"], "w") as peer, open(paths["rows"], "w") as rows:
        for samples in days_of_samples:
            by_device_hour = {}
            peer_lines = []
            row_lines = []
            for t_us, device, bpm in samples:
                anchor += anchor_rng.randint(1, 39)
                ts = stamp(t_us)
                peer_lines.append("%d\t%s\t%d\n" % (device, ts, bpm))
                row_lines.append("%d\t%d\t%d\t%s\t%d\t%d\n" % (GATEWAY, device, HEART_RATE, ts, bpm, anchor))
                by_device_hour.setdefault((device, t_us // 3_600_000_000), []).append((t_us, bpm, anchor))
            peer.writelines(peer_lines)
            rows.writelines(row_lines)
            count += len(samples)
            if samples:
                first_us = samples[0][0] if first_us is None else first_us
                last_us = samples[-1][0]
            for (device, _), group in by_device_hour.items():
                for i in range(0, len(group), CHUNK_MAX):
                    chunk_rows.append((device, group[i:i + CHUNK_MAX]))
    chunk_rows.sort(key=lambda c: (c[1][0][0], c[0]))
    with open(paths["chunks"], "w") as chunks:
        for device, part in chunk_rows:
            starts = [s[0] for s in part]
            vals = [s[1] for s in part]
            chunks.write("\t".join([
                str(GATEWAY), HEART_RATE_NAME, str(device), "1", stamp(starts[0]), stamp(starts[-1]),
                str(len(part)), str(min(vals)), str(max(vals)), str(sum(vals)),
                "{" + ",".join(map(str, starts)) + "}",
                "{" + ",".join(map(str, vals)) + "}",
                "{" + ",".join(str(s[2]) for s in part) + "}"]) + "\n")
    return paths, count, len(chunk_rows), first_us, last_us


# -- the shapes --------------------------------------------------------------------------------

def month_start(us):
    d = datetime.datetime.fromtimestamp(us // 1_000_000, datetime.timezone.utc)
    return datetime.datetime(d.year, d.month, 1, tzinfo=datetime.timezone.utc)


def add_month(d):
    return d.replace(year=d.year + d.month // 12, month=d.month % 12 + 1)


def schema_sql(first_us, last_us):
    partitions = []
    m = month_start(first_us)
    m = m.replace(year=m.year - 1, month=12) if m.month == 1 else m.replace(month=m.month - 1)   # one before
    end = add_month(add_month(month_start(last_us)))                                              # one after
    while m < end:
        n = add_month(m)
        partitions.append("CREATE TABLE hrmd.hrmd_rows_%s PARTITION OF hrmd.hrmd_rows FOR VALUES FROM ('%s') TO ('%s');"
                          % (m.strftime("%Y_%m"), m.isoformat(), n.isoformat()))
        m = n
    return """
CREATE SCHEMA peer;
CREATE TABLE peer.hr (device int, t timestamptz, bpm double precision);
CREATE INDEX ON peer.hr (device, t);

CREATE SCHEMA hrmd;
CREATE TABLE hrmd.hrmd_rows (gateway smallint NOT NULL, device int NOT NULL, type smallint NOT NULL,
    t timestamptz NOT NULL, value double precision NOT NULL, anchor bigint NOT NULL) PARTITION BY RANGE (t);
%s
CREATE INDEX hrmd_rows_t_brin ON hrmd.hrmd_rows USING brin (t);

CREATE TABLE hrmd.chunk (id bigserial PRIMARY KEY, gateway_id int NOT NULL, type text NOT NULL,
    device_id int NOT NULL, source_id int NOT NULL, first_start timestamptz NOT NULL,
    last_start timestamptz NOT NULL, count int NOT NULL, minimum float8 NOT NULL, maximum float8 NOT NULL,
    sum float8 NOT NULL, starts bigint[] NOT NULL, vals float8[] NOT NULL, anchors bigint[] NOT NULL);
CREATE INDEX chunk_device_type_last ON hrmd.chunk (device_id, type, last_start);
CREATE VIEW hrmd.samples_b AS
    SELECT c.gateway_id, c.device_id, c.type, to_timestamp(u.s / 1e6) AS t, u.v AS value
    FROM hrmd.chunk c, unnest(c.starts, c.vals) AS u(s, v);
""" % "\n".join(partitions)


CHUNK_COLUMNS = ("gateway_id, type, device_id, source_id, first_start, last_start, count, minimum, maximum, sum, "
                 "starts, vals, anchors")


def copy(pg, db, table, path):
    argv, env = pg.psql_command(database=db)
    started = time.monotonic()
    with open(path) as f:
        out = subprocess.run(argv + ["-c", "COPY %s FROM STDIN" % table], stdin=f, env=env,
                             capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError("COPY %s failed: %s\n%s" % (table, out.stderr, pg.log_tail(20)))
    return time.monotonic() - started


def sizes(pg, db):
    def q(sql):
        return int(pg.psql(sql, database=db) or 0)

    leaves = "(SELECT relid FROM pg_partition_tree('hrmd.hrmd_rows') WHERE isleaf) AS leaves"
    return {
        "PEER": {"total": q("SELECT pg_total_relation_size('peer.hr')"),
                 "heap": q("SELECT pg_relation_size('peer.hr')"),
                 "indexes": q("SELECT pg_indexes_size('peer.hr')")},
        "A": {"total": q("SELECT sum(pg_total_relation_size(relid)) FROM %s" % leaves),
              "heap": q("SELECT sum(pg_relation_size(relid)) FROM %s" % leaves),
              "indexes": q("SELECT sum(pg_indexes_size(relid)) FROM %s" % leaves)},
        "B": {"total": q("SELECT pg_total_relation_size('hrmd.chunk')"),
              "heap": q("SELECT pg_relation_size('hrmd.chunk')"),
              "indexes": q("SELECT pg_indexes_size('hrmd.chunk')")},
    }


def timed(pg, db, sql, runs=RUNS):
    """Best of `runs` after a warm-up, in ms, from psql's \\timing (the rows reach psql, not printed)."""
    script = "\\timing on\n\\o /dev/null\n" + (sql.rstrip().rstrip(";") + ";\n") * (runs + 1)
    argv, env = pg.psql_command(database=db)
    out = subprocess.run(argv, input=script, env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError("query failed: %s\n%s" % (sql, out.stderr))
    times = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", out.stdout, re.M)]
    if len(times) != runs + 1:
        raise RuntimeError("expected %d timings from psql, got %r" % (runs + 1, out.stdout))
    return min(times[1:])


def queries(day_lo, day_hi):
    lo_us = int(datetime.datetime.fromisoformat(day_lo).timestamp() * 1e6)
    hi_us = int(datetime.datetime.fromisoformat(day_hi).timestamp() * 1e6)
    d = QUERY_DEVICE
    return {
        "per-day stats": {
            "PEER": "SELECT date_trunc('day', t), count(*), avg(bpm), min(bpm), max(bpm) FROM peer.hr GROUP BY 1 ORDER BY 1",
            "A": "SELECT date_trunc('day', t), count(*), avg(value), min(value), max(value) FROM hrmd.hrmd_rows "
                 "WHERE type = %d GROUP BY 1 ORDER BY 1" % HEART_RATE,
            "B": "SELECT date_trunc('day', first_start), sum(count), sum(sum) / sum(count), min(minimum), max(maximum) "
                 "FROM hrmd.chunk WHERE type = '%s' GROUP BY 1 ORDER BY 1" % HEART_RATE_NAME,
            "B view": "SELECT date_trunc('day', t), count(*), avg(value), min(value), max(value) FROM hrmd.samples_b "
                      "WHERE type = '%s' GROUP BY 1 ORDER BY 1" % HEART_RATE_NAME,
        },
        "one device, one day": {
            "PEER": "SELECT t, bpm FROM peer.hr WHERE device = %d AND t >= '%s' AND t < '%s' ORDER BY t" % (d, day_lo, day_hi),
            "A": "SELECT t, value FROM hrmd.hrmd_rows WHERE type = %d AND device = %d AND t >= '%s' AND t < '%s' ORDER BY t"
                 % (HEART_RATE, d, day_lo, day_hi),
            "B": "SELECT to_timestamp(u.s / 1e6) AS t, u.v FROM hrmd.chunk c, unnest(c.starts, c.vals) AS u(s, v) "
                 "WHERE c.device_id = %d AND c.type = '%s' AND c.last_start >= '%s' AND c.first_start < '%s' "
                 "AND u.s >= %d AND u.s < %d ORDER BY u.s" % (d, HEART_RATE_NAME, day_lo, day_hi, lo_us, hi_us),
            "B view": "SELECT t, value FROM hrmd.samples_b WHERE device_id = %d AND type = '%s' AND t >= '%s' AND t < '%s' "
                      "ORDER BY t" % (d, HEART_RATE_NAME, day_lo, day_hi),
        },
        "count": {
            "PEER": "SELECT count(*) FROM peer.hr",
            "A": "SELECT count(*) FROM hrmd.hrmd_rows",
            "B": "SELECT sum(count) FROM hrmd.chunk",
            "B view": "SELECT count(*) FROM hrmd.samples_b",
        },
    }


def normalized(output):
    """A query's answer with the averages rounded, to compare the shapes'."""
    lines = []
    for line in output.splitlines():
        fields = []
        for field in line.split("|"):
            try:
                fields.append("%.6f" % float(field))
            except ValueError:
                fields.append(field)
        lines.append("|".join(fields))
    return lines


def array_storage(pg, db):
    row = pg.psql("SELECT count(*), avg(pg_column_size(starts)), avg(pg_column_size(vals)), avg(pg_column_size(anchors)), "
                  "avg(pg_column_size(starts::text::bigint[])) FROM hrmd.chunk WHERE count = %d" % CHUNK_MAX, database=db)
    n, starts, vals, anchors, raw = row.split("|")
    methods = pg.psql("SELECT string_agg(DISTINCT coalesce(pg_column_compression(starts), 'none') || '/' || "
                      "coalesce(pg_column_compression(vals), 'none') || '/' || coalesce(pg_column_compression(anchors), 'none'), ', ') "
                      "FROM hrmd.chunk WHERE count = %d" % CHUNK_MAX, database=db)
    return {"full_chunks": int(n), "raw_array_bytes": round(float(raw)),
            "starts_bytes": round(float(starts)), "vals_bytes": round(float(vals)),
            "anchors_bytes": round(float(anchors)), "compression (starts/vals/anchors)": methods}


def run_set(pg, name, work, days_of_samples, day_lo, day_hi, lz4):
    print("%s: generating…" % name, flush=True)
    paths, count, chunk_count, first_us, last_us = write_files(work, days_of_samples)
    db = name
    pg.create_database(db)
    pg.psql(schema_sql(first_us, last_us), database=db)
    load = {"PEER": copy(pg, db, "peer.hr", paths["peer"]),
            "A": copy(pg, db, "hrmd.hrmd_rows", paths["rows"]),
            "B": copy(pg, db, "hrmd.chunk (%s)" % CHUNK_COLUMNS, paths["chunks"])}
    pg.psql("VACUUM ANALYZE", database=db, timeout=1800)
    result = {"samples": count, "chunks": chunk_count, "load_s": load, "sizes": sizes(pg, db),
              "arrays": array_storage(pg, db), "queries": {}, "agree": {}, "variants": {}}
    print("%s: %d samples, %d chunks loaded; timing…" % (name, count, chunk_count), flush=True)

    for title, by_shape in queries(day_lo, day_hi).items():
        answers = {shape: normalized(pg.psql(sql, database=db, timeout=600)) for shape, sql in by_shape.items()}
        result["agree"][title] = all(a == answers["PEER"] for a in answers.values())
        result["queries"][title] = {shape: timed(pg, db, sql) for shape, sql in by_shape.items()}

    # A's variants for one device's day: a BRIN on device, then a btree on (device, t) in its place.
    device_day = queries(day_lo, day_hi)["one device, one day"]["A"]
    for variant, ddl, drop in (
            ("A + BRIN (device)", "CREATE INDEX hrmd_rows_device_brin ON hrmd.hrmd_rows USING brin (device)",
             "DROP INDEX hrmd.hrmd_rows_device_brin"),
            ("A + btree (device, t)", "CREATE INDEX hrmd_rows_device_t ON hrmd.hrmd_rows (device, t)",
             "DROP INDEX hrmd.hrmd_rows_device_t")):
        pg.psql(ddl, database=db, timeout=1800)
        pg.psql("VACUUM ANALYZE hrmd.hrmd_rows", database=db, timeout=1800)
        result["variants"][variant] = {"total": sizes(pg, db)["A"]["total"], "one device, one day": timed(pg, db, device_day)}
        pg.psql(drop, database=db)

    if lz4:
        pg.psql("CREATE TABLE hrmd.chunk_lz4 (LIKE hrmd.chunk INCLUDING ALL);"
                "ALTER TABLE hrmd.chunk_lz4 ALTER starts SET COMPRESSION lz4, ALTER vals SET COMPRESSION lz4, "
                "ALTER anchors SET COMPRESSION lz4", database=db)
        copy(pg, db, "hrmd.chunk_lz4 (%s)" % CHUNK_COLUMNS, paths["chunks"])
        pg.psql("VACUUM ANALYZE hrmd.chunk_lz4", database=db, timeout=600)
        lz4_row = pg.psql("SELECT pg_total_relation_size('hrmd.chunk_lz4'), avg(pg_column_size(starts)), "
                          "avg(pg_column_size(vals)), avg(pg_column_size(anchors)) FROM hrmd.chunk_lz4 WHERE count = %d"
                          % CHUNK_MAX, database=db).split("|")
        result["variants"]["B, arrays lz4"] = {"total": int(lz4_row[0]), "starts_bytes": round(float(lz4_row[1])),
                                               "vals_bytes": round(float(lz4_row[2])),
                                               "anchors_bytes": round(float(lz4_row[3]))}
        pg.psql("DROP TABLE hrmd.chunk_lz4", database=db)
    pg.psql("DROP DATABASE %s" % db)
    for path in paths.values():
        os.unlink(path)
    return result


def ms(value):
    return "%.1f" % value if value >= 10 else "%.2f" % value


def print_set(name, description, r):
    n = r["samples"]
    print()
    print("%s — %s: %d samples, %d chunks" % (name, description, n, r["chunks"]))
    shapes = ["PEER", "A", "B", "B view"]
    header = "%-34s" % "" + "".join("%16s" % s for s in shapes)
    print(header)
    row = "%-34s" % "bytes per sample (heap+idx)"
    for shape in shapes[:3]:
        s = r["sizes"][shape]
        row += "%16s" % ("%.1f (%.1f+%.1f)" % (s["total"] / n, (s["total"] - s["indexes"]) / n, s["indexes"] / n))
    print(row + "%16s" % "—")
    row = "%-34s" % "  ratio to PEER"
    for shape in shapes[:3]:
        row += "%16s" % ("%.2f×" % (r["sizes"][shape]["total"] / r["sizes"]["PEER"]["total"]))
    print(row)
    for title, times in r["queries"].items():
        row = "%-34s" % (title + ", ms" + ("" if r["agree"][title] else " (ANSWERS DIFFER)"))
        for shape in shapes:
            row += "%16s" % ms(times[shape])
        print(row)
        row = "%-34s" % "  ratio to PEER"
        for shape in shapes:
            ratio = times[shape] / times["PEER"]
            row += "%16s" % (("%.2f×" if ratio >= 0.1 else "%.4f×") % ratio)
        print(row)
    print("%-34s" % "COPY, s" + "".join("%16.2f" % r["load_s"][s] for s in shapes[:3]))
    for variant, v in r["variants"].items():
        extra = ", one device's day %s ms" % ms(v["one device, one day"]) if "one device, one day" in v else \
            ", arrays starts/vals/anchors %d/%d/%d B per full chunk" % (v["starts_bytes"], v["vals_bytes"], v["anchors_bytes"])
        print("  %s: %.1f bytes per sample%s" % (variant, v["total"] / n, extra))
    a = r["arrays"]
    print("  B's arrays per full chunk (%d of them; %d B raw each): starts %d B, vals %d B, anchors %d B (%s)"
          % (a["full_chunks"], a["raw_array_bytes"], a["starts_bytes"], a["vals_bytes"], a["anchors_bytes"],
             a["compression (starts/vals/anchors)"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", default=os.path.join(".build", "bench-central-shape.json"))
    args = parser.parse_args()
    missing = postgres.requirements()
    if missing:
        sys.exit("central-shape: " + missing)
    sets = {
        "month": ("%d straps, 2 h a day at 1 Hz, %d days" % (STRAPS, DAYS),
                  lambda: generate(DAYS, STRAPS, 1, 7200, 17, 900, seed=1),
                  ("2025-04-15 00:00:00+00", "2025-04-16 00:00:00+00") if DAYS > 14 else
                  ("2025-04-01 00:00:00+00", "2025-04-02 00:00:00+00")),
        "burst": ("%d straps at 4 Hz for 1 h" % STRAPS, lambda: generate(1, STRAPS, 4, 3600, 18, 60, seed=2),
                  ("2025-04-01 00:00:00+00", "2025-04-02 00:00:00+00")),
    }
    results = {"postgres": None, "runs": RUNS, "sets": {}}
    with postgres.TemporaryPostgres(prefix="hrmd-central-shape-", options={"timezone": "UTC"}) as pg:
        results["postgres"] = pg.psql("SHOW server_version")
        results["settings"] = dict(line.split("|") for line in pg.psql(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'jit', "
            "'max_parallel_workers_per_gather', 'default_toast_compression', 'fsync')").splitlines())
        lz4 = pg.psql("SET default_toast_compression = lz4; SELECT 1", check=False).returncode == 0
        work = tempfile.mkdtemp(prefix="data-", dir=pg.dir)
        for name, (description, data, (day_lo, day_hi)) in sets.items():
            results["sets"][name] = dict(description=description, **run_set(pg, name, work, data(), day_lo, day_hi, lz4))
    print("\nPostgreSQL %s, session time zone UTC, best of %d after a warm-up (psql \\timing), settings %s"
          % (results["postgres"], RUNS, ", ".join("%s=%s" % kv for kv in sorted(results["settings"].items()))))
    for name, r in results["sets"].items():
        print_set(name, r["description"], r)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(results, f, indent=2)
    print("\n(written to %s)" % args.json)


if __name__ == "__main__":
    main()
