/// The central store's schema, `hrmd` in a PostgreSQL database, as numbered migrations. hrmd
/// applies the missing ones when a gateway connects with a role that owns the schema (or may
/// create it); docs/central-store.md describes every table.
///
/// Shape, chosen by measurement (docs/benchmarks.md, `make bench-central-shape`): samples are
/// kept as the local store keeps them, in chunks of at most `CentralSchema.chunkCapacity`
/// samples of one gateway, type, source, device and UTC hour, with summary columns; the
/// samples themselves are parallel arrays (start in microseconds, value, local anchor, ANT+
/// beat stamp) that PostgreSQL compresses. The view `hrmd.samples` shows them as rows.
public enum CentralSchema {
    /// One step of the schema: applied once, in order, recorded in `hrmd.migration`.
    public struct Migration: Sendable {
        public var version: Int
        public var name: String
        public var sql: String
    }

    /// Samples a chunk holds at most.
    public static let chunkCapacity = 1024
    /// The value `hrmd.meta` holds under `application`: what marks a schema as hrmd's.
    static let applicationMark = "hrmd"
    /// The notification channel a batch's commit signals (`NOTIFY hrmd_changes, 'GATEWAY'`).
    public static let changesChannel = "hrmd_changes"
    /// The first key of the advisory locks that serialize writers of one device's samples.
    static let deviceLockClass = 0x4852

    /// Every migration this hrmd knows, in order.
    public static let migrations: [Migration] = [
        Migration(version: 1, name: "tables", sql: tables),
        Migration(version: 2, name: "row-level-security", sql: rowLevelSecurity),
        Migration(version: 3, name: "views", sql: views),
        Migration(version: 4, name: "gateway-isolation", sql: gatewayIsolation),
        Migration(version: 5, name: "gateway-writes", sql: gatewayWrites),
        Migration(version: 6, name: "workouts", sql: workouts),
        Migration(version: 7, name: "events", sql: events),
    ]

    /// The newest version this hrmd knows.
    public static var currentVersion: Int { migrations.last?.version ?? 0 }

    private static let tables = """
        CREATE TABLE hrmd.meta (key text PRIMARY KEY, value text NOT NULL);
        INSERT INTO hrmd.meta (key, value) VALUES ('application', 'hrmd');
        CREATE TABLE hrmd.gateway (
            id serial PRIMARY KEY,
            name text NOT NULL UNIQUE CHECK (name <> ''),
            role name NOT NULL DEFAULT current_user,
            first_seen timestamptz NOT NULL DEFAULT now(),
            last_batch timestamptz
        );
        CREATE TABLE hrmd.cursor (
            gateway_id integer NOT NULL REFERENCES hrmd.gateway ON DELETE CASCADE,
            type text NOT NULL,
            anchor bigint NOT NULL DEFAULT 0,
            batches bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (gateway_id, type)
        );
        CREATE TABLE hrmd.source (
            id serial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            version text
        );
        CREATE TABLE hrmd.device (
            id serial PRIMARY KEY,
            identifier text NOT NULL UNIQUE,
            name text, manufacturer text, model text,
            hardware_version text, firmware_version text, software_version text
        );
        CREATE SEQUENCE hrmd.change_seq;
        CREATE TABLE hrmd.chunk (
            id bigserial PRIMARY KEY,
            gateway_id integer NOT NULL REFERENCES hrmd.gateway,
            type text NOT NULL,
            source_id integer NOT NULL REFERENCES hrmd.source,
            device_id integer REFERENCES hrmd.device,
            duration bigint,
            sensor_location smallint,
            sensor_contact boolean,
            metadata text,
            first_start bigint NOT NULL,
            last_start bigint NOT NULL,
            first_anchor bigint NOT NULL,
            last_anchor bigint NOT NULL,
            count integer NOT NULL CHECK (count > 0),
            minimum double precision NOT NULL,
            maximum double precision NOT NULL,
            sum double precision NOT NULL,
            starts bigint[] NOT NULL,
            vals double precision[] NOT NULL,
            anchors bigint[] NOT NULL,
            beats integer[],
            changed bigint NOT NULL DEFAULT nextval('hrmd.change_seq')
        );
        CREATE INDEX chunk_device_time ON hrmd.chunk (device_id, type, last_start);
        CREATE INDEX chunk_type_time ON hrmd.chunk (type, first_start);
        CREATE INDEX chunk_gateway_anchor ON hrmd.chunk (gateway_id, type, last_anchor);
        CREATE INDEX chunk_changed ON hrmd.chunk (changed);
        CREATE TABLE hrmd.synced_sample (
            id bigserial PRIMARY KEY,
            gateway_id integer NOT NULL REFERENCES hrmd.gateway,
            type text NOT NULL,
            source_id integer NOT NULL REFERENCES hrmd.source,
            device_id integer REFERENCES hrmd.device,
            sync_identifier text NOT NULL,
            sync_version bigint NOT NULL,
            start_time bigint NOT NULL,
            end_time bigint NOT NULL,
            value double precision NOT NULL,
            sensor_location smallint,
            sensor_contact boolean,
            metadata text,
            anchor bigint NOT NULL,
            changed bigint NOT NULL DEFAULT nextval('hrmd.change_seq'),
            UNIQUE (gateway_id, source_id, sync_identifier)
        );
        CREATE INDEX synced_sample_time ON hrmd.synced_sample (type, start_time);
        CREATE INDEX synced_sample_changed ON hrmd.synced_sample (changed);
        CREATE TABLE hrmd.tombstone (
            seq bigint PRIMARY KEY DEFAULT nextval('hrmd.change_seq'),
            gateway_id integer NOT NULL REFERENCES hrmd.gateway,
            type text NOT NULL,
            source_id integer NOT NULL REFERENCES hrmd.source,
            device_id integer REFERENCES hrmd.device,
            start_time bigint NOT NULL,
            anchor bigint NOT NULL,
            deleted_at timestamptz NOT NULL DEFAULT now()
        );
        """

    /// Each gateway's role writes only its own gateway's rows; every role that may read sees
    /// every row. FORCE holds the tables' owner too; only superusers and BYPASSRLS roles pass.
    private static let rowLevelSecurity = """
        DO $$
        BEGIN
            IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hrmd_gateway') THEN CREATE ROLE hrmd_gateway NOLOGIN; END IF;
            IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hrmd_analyst') THEN CREATE ROLE hrmd_analyst NOLOGIN; END IF;
        END $$;
        CREATE FUNCTION hrmd.owns_gateway(gateway integer) RETURNS boolean
            LANGUAGE sql STABLE
            AS $$ SELECT EXISTS (SELECT 1 FROM hrmd.gateway g WHERE g.id = gateway AND g.role = current_user) $$;
        ALTER TABLE hrmd.gateway ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY gateway_read ON hrmd.gateway FOR SELECT USING (true);
        CREATE POLICY gateway_register ON hrmd.gateway FOR INSERT WITH CHECK (role = current_user);
        CREATE POLICY gateway_own ON hrmd.gateway FOR UPDATE USING (role = current_user) WITH CHECK (role = current_user);
        ALTER TABLE hrmd.cursor ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY cursor_read ON hrmd.cursor FOR SELECT USING (true);
        CREATE POLICY cursor_own ON hrmd.cursor FOR ALL USING (hrmd.owns_gateway(gateway_id)) WITH CHECK (hrmd.owns_gateway(gateway_id));
        ALTER TABLE hrmd.chunk ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY chunk_read ON hrmd.chunk FOR SELECT USING (true);
        CREATE POLICY chunk_own ON hrmd.chunk FOR ALL USING (hrmd.owns_gateway(gateway_id)) WITH CHECK (hrmd.owns_gateway(gateway_id));
        ALTER TABLE hrmd.synced_sample ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY synced_read ON hrmd.synced_sample FOR SELECT USING (true);
        CREATE POLICY synced_own ON hrmd.synced_sample FOR ALL USING (hrmd.owns_gateway(gateway_id)) WITH CHECK (hrmd.owns_gateway(gateway_id));
        ALTER TABLE hrmd.tombstone ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY tombstone_read ON hrmd.tombstone FOR SELECT USING (true);
        CREATE POLICY tombstone_own ON hrmd.tombstone FOR INSERT WITH CHECK (hrmd.owns_gateway(gateway_id));
        GRANT USAGE ON SCHEMA hrmd TO hrmd_gateway, hrmd_analyst;
        GRANT SELECT ON ALL TABLES IN SCHEMA hrmd TO hrmd_gateway, hrmd_analyst;
        GRANT INSERT, UPDATE ON hrmd.gateway, hrmd.source, hrmd.device TO hrmd_gateway;
        GRANT INSERT, UPDATE ON hrmd.cursor TO hrmd_gateway;
        GRANT INSERT, UPDATE, DELETE ON hrmd.chunk, hrmd.synced_sample TO hrmd_gateway;
        GRANT INSERT ON hrmd.tombstone TO hrmd_gateway;
        GRANT USAGE ON ALL SEQUENCES IN SCHEMA hrmd TO hrmd_gateway;
        GRANT EXECUTE ON FUNCTION hrmd.owns_gateway(integer) TO hrmd_gateway, hrmd_analyst;
        """

    /// Rows for SQL users: every sample with its gateway, device and source by name, times as
    /// timestamptz. A sample kept under a sync identifier by several gateways shows once, in
    /// its highest version.
    private static let views = """
        CREATE \(samplesView(latestOf: "hrmd.synced_sample"))
        CREATE FUNCTION hrmd.samples_between(since timestamptz, until timestamptz)
            RETURNS SETOF hrmd.samples LANGUAGE sql STABLE AS $$
            WITH bounds AS (
                SELECT (extract(epoch FROM since) * 1000000)::bigint AS low, (extract(epoch FROM until) * 1000000)::bigint AS high
            )
            SELECT g.name, c.type, s.name, d.identifier,
                   timestamptz 'epoch' + u.start * interval '1 microsecond',
                   timestamptz 'epoch' + CASE WHEN c.duration IS NULL THEN u.start + round(u.value * 1000)::bigint
                                              ELSE u.start + c.duration END * interval '1 microsecond',
                   u.value, c.sensor_location, c.sensor_contact, NULL::text
            FROM bounds, hrmd.chunk c
            JOIN hrmd.gateway g ON g.id = c.gateway_id
            JOIN hrmd.source s ON s.id = c.source_id
            LEFT JOIN hrmd.device d ON d.id = c.device_id,
            unnest(c.starts, c.vals) AS u(start, value)
            WHERE c.last_start >= bounds.low AND c.first_start < bounds.high AND u.start >= bounds.low AND u.start < bounds.high
            UNION ALL
            SELECT * FROM hrmd.samples WHERE sync_identifier IS NOT NULL AND start_time >= since AND start_time < until
            $$;
        CREATE VIEW hrmd.hourly WITH (security_invoker = true) AS
            SELECT g.name AS gateway, c.type, d.identifier AS device,
                   timestamptz 'epoch' + (c.first_start / 3600000000) * interval '1 hour' AS hour,
                   sum(c.count) AS count, min(c.minimum) AS minimum, max(c.maximum) AS maximum, sum(c.sum) / sum(c.count) AS average
            FROM hrmd.chunk c
            JOIN hrmd.gateway g ON g.id = c.gateway_id
            LEFT JOIN hrmd.device d ON d.id = c.device_id
            GROUP BY 1, 2, 3, 4;
        GRANT SELECT ON hrmd.samples, hrmd.hourly TO hrmd_gateway, hrmd_analyst;
        GRANT EXECUTE ON FUNCTION hrmd.samples_between(timestamptz, timestamptz) TO hrmd_gateway, hrmd_analyst;
        """

    /// What no gateway may do to another (docs/central-store.md, "A compromised gateway"):
    /// - the shared rows (sources, devices) are written only through two SECURITY DEFINER
    ///   functions that add a missing row and fill columns still empty, never change what is
    ///   there; gateways lose INSERT and UPDATE on them, and with it every lock stronger than
    ///   ACCESS SHARE on them;
    /// - a chunk's arrays are one-dimensional, without NULLs, as long as its count (a malformed
    ///   chunk is refused when written, so that readers and other gateways never meet one);
    /// - a sample identity belongs to the gateway that wrote it first: readers take its
    ///   versions from that gateway alone.
    private static let gatewayIsolation = """
        CREATE FUNCTION hrmd.source_id(source_name text, source_version text) RETURNS integer
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            DECLARE found integer;
            BEGIN
                SELECT id INTO found FROM hrmd.source WHERE name = source_name;
                IF found IS NULL THEN
                    INSERT INTO hrmd.source (name, version) VALUES (source_name, source_version)
                    ON CONFLICT (name) DO NOTHING RETURNING id INTO found;
                    IF found IS NULL THEN SELECT id INTO found FROM hrmd.source WHERE name = source_name; END IF;
                END IF;
                RETURN found;
            END $$;
        CREATE FUNCTION hrmd.device_id(
            device_identifier text, device_name text, device_manufacturer text, device_model text,
            device_hardware text, device_firmware text, device_software text
        ) RETURNS integer
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            DECLARE found integer;
            BEGIN
                INSERT INTO hrmd.device (identifier, name, manufacturer, model, hardware_version, firmware_version, software_version)
                VALUES (device_identifier, device_name, device_manufacturer, device_model, device_hardware, device_firmware, device_software)
                ON CONFLICT (identifier) DO UPDATE SET
                    name = coalesce(hrmd.device.name, EXCLUDED.name),
                    manufacturer = coalesce(hrmd.device.manufacturer, EXCLUDED.manufacturer),
                    model = coalesce(hrmd.device.model, EXCLUDED.model),
                    hardware_version = coalesce(hrmd.device.hardware_version, EXCLUDED.hardware_version),
                    firmware_version = coalesce(hrmd.device.firmware_version, EXCLUDED.firmware_version),
                    software_version = coalesce(hrmd.device.software_version, EXCLUDED.software_version)
                RETURNING id INTO found;
                RETURN found;
            END $$;
        REVOKE ALL ON FUNCTION hrmd.source_id(text, text) FROM PUBLIC;
        REVOKE ALL ON FUNCTION hrmd.device_id(text, text, text, text, text, text, text) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION hrmd.source_id(text, text) TO hrmd_gateway;
        GRANT EXECUTE ON FUNCTION hrmd.device_id(text, text, text, text, text, text, text) TO hrmd_gateway;
        REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON hrmd.source, hrmd.device FROM hrmd_gateway;
        ALTER TABLE hrmd.chunk ADD CONSTRAINT chunk_shape CHECK (
            array_ndims(starts) = 1 AND array_ndims(vals) = 1 AND array_ndims(anchors) = 1
            AND cardinality(starts) = count AND cardinality(vals) = count AND cardinality(anchors) = count
            AND array_position(starts, NULL) IS NULL AND array_position(vals, NULL) IS NULL AND array_position(anchors, NULL) IS NULL
            AND (beats IS NULL OR (array_ndims(beats) = 1 AND cardinality(beats) = count))
        ) NOT VALID;
        CREATE INDEX synced_sample_identity ON hrmd.synced_sample (source_id, sync_identifier, id);
        CREATE VIEW hrmd.synced_owned WITH (security_invoker = true) AS
            SELECT x.* FROM hrmd.synced_sample x
            WHERE x.gateway_id = (SELECT o.gateway_id FROM hrmd.synced_sample o
                                  WHERE o.source_id = x.source_id AND o.sync_identifier = x.sync_identifier
                                  ORDER BY o.id LIMIT 1);
        GRANT SELECT ON hrmd.synced_owned TO hrmd_gateway, hrmd_analyst;
        CREATE OR REPLACE \(samplesView(latestOf: "hrmd.synced_owned"))
        """

    /// No gateway may lock what others read. PostgreSQL lets a role take any table lock when it
    /// holds UPDATE or DELETE on the table, and ACCESS EXCLUSIVE stops every reader; with only
    /// SELECT and INSERT, ROW EXCLUSIVE is the strongest, which stops no reader and no other
    /// writer. So gateways lose UPDATE and DELETE on every table, and change their own rows
    /// through SECURITY DEFINER functions, one per statement they need:
    /// - the functions run as the schema's owner, and row security (forced on the owner too)
    ///   still keeps each to the caller's rows: `owns_gateway` now compares a gateway's role with
    ///   `session_user`, the role that logged in, which a function does not change (inside
    ///   one, `current_user` is the owner);
    /// - a batch holds its cursor's row lock (`cursor_take`) from the start, so a gateway's
    ///   batches never interleave and its chunks need no row locks of their own.
    private static let gatewayWrites = """
        CREATE OR REPLACE FUNCTION hrmd.owns_gateway(gateway integer) RETURNS boolean
            LANGUAGE sql STABLE
            AS $$ SELECT EXISTS (SELECT 1 FROM hrmd.gateway g WHERE g.id = gateway AND g.role = session_user) $$;
        ALTER POLICY gateway_own ON hrmd.gateway USING (role = session_user) WITH CHECK (role = session_user);
        CREATE FUNCTION hrmd.gateway_touch(gateway_ref integer) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ UPDATE hrmd.gateway SET last_batch = now() WHERE id = gateway_ref $$;
        CREATE FUNCTION hrmd.cursor_take(gateway_ref integer, sample_type text) RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            DECLARE found bigint;
            BEGIN
                IF NOT hrmd.owns_gateway(gateway_ref) THEN
                    RAISE EXCEPTION 'gateway % is not %''s', gateway_ref, session_user USING ERRCODE = '42501';
                END IF;
                INSERT INTO hrmd.cursor (gateway_id, type) VALUES (gateway_ref, sample_type) ON CONFLICT DO NOTHING;
                SELECT anchor INTO found FROM hrmd.cursor WHERE gateway_id = gateway_ref AND type = sample_type FOR UPDATE;
                RETURN found;
            END $$;
        CREATE FUNCTION hrmd.cursor_move(gateway_ref integer, sample_type text, new_anchor bigint) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ UPDATE hrmd.cursor SET anchor = new_anchor, batches = batches + 1 WHERE gateway_id = gateway_ref AND type = sample_type $$;
        CREATE FUNCTION hrmd.chunk_append(
            chunk_ref bigint, more_starts bigint[], more_vals double precision[], more_anchors bigint[], more_beats integer[],
            more integer, newest_start bigint, newest_anchor bigint, low double precision, high double precision,
            total double precision
        ) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            UPDATE hrmd.chunk SET starts = starts || more_starts, vals = vals || more_vals, anchors = anchors || more_anchors,
                beats = CASE WHEN beats IS NULL AND more_beats IS NULL THEN NULL
                             ELSE coalesce(beats, array_fill(NULL::integer, ARRAY[count]))
                                  || coalesce(more_beats, array_fill(NULL::integer, ARRAY[more])) END,
                count = count + more, last_start = newest_start, last_anchor = newest_anchor,
                minimum = least(minimum, low), maximum = greatest(maximum, high), sum = sum + total,
                changed = nextval('hrmd.change_seq')
            WHERE id = chunk_ref
            $$;
        CREATE FUNCTION hrmd.chunk_replace(
            chunk_ref bigint, new_starts bigint[], new_vals double precision[], new_anchors bigint[], new_beats integer[],
            new_count integer, oldest_start bigint, newest_start bigint, oldest_anchor bigint, newest_anchor bigint,
            low double precision, high double precision, total double precision
        ) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            UPDATE hrmd.chunk SET starts = new_starts, vals = new_vals, anchors = new_anchors, beats = new_beats, count = new_count,
                first_start = oldest_start, last_start = newest_start, first_anchor = oldest_anchor, last_anchor = newest_anchor,
                minimum = low, maximum = high, sum = total, changed = nextval('hrmd.change_seq')
            WHERE id = chunk_ref
            $$;
        CREATE FUNCTION hrmd.chunk_drop(chunk_ref bigint) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$ DELETE FROM hrmd.chunk WHERE id = chunk_ref $$;
        CREATE FUNCTION hrmd.synced_put(
            gateway_ref integer, sample_type text, source_ref integer, device_ref integer, identifier text, version bigint,
            start_at bigint, end_at bigint, sample_value double precision, location smallint, contact boolean,
            other_metadata text, local_anchor bigint
        ) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            INSERT INTO hrmd.synced_sample (gateway_id, type, source_id, device_id, sync_identifier, sync_version,
                start_time, end_time, value, sensor_location, sensor_contact, metadata, anchor)
            VALUES (gateway_ref, sample_type, source_ref, device_ref, identifier, version, start_at, end_at, sample_value, location, contact,
                    other_metadata, local_anchor)
            ON CONFLICT (gateway_id, source_id, sync_identifier) DO UPDATE SET
                type = EXCLUDED.type, device_id = EXCLUDED.device_id, sync_version = EXCLUDED.sync_version,
                start_time = EXCLUDED.start_time, end_time = EXCLUDED.end_time, value = EXCLUDED.value,
                sensor_location = EXCLUDED.sensor_location, sensor_contact = EXCLUDED.sensor_contact,
                metadata = EXCLUDED.metadata, anchor = EXCLUDED.anchor, changed = nextval('hrmd.change_seq')
            WHERE hrmd.synced_sample.sync_version <= EXCLUDED.sync_version
            $$;
        CREATE FUNCTION hrmd.synced_drop(gateway_ref integer, sample_type text, local_anchors bigint[])
            RETURNS TABLE (source_id integer, device_id integer, start_time bigint, anchor bigint)
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            DELETE FROM hrmd.synced_sample x WHERE x.gateway_id = gateway_ref AND x.type = sample_type AND x.anchor = ANY(local_anchors)
            RETURNING x.source_id, x.device_id, x.start_time, x.anchor
            $$;
        DO $$
        DECLARE f text;
        BEGIN
            FOREACH f IN ARRAY ARRAY[
                'hrmd.gateway_touch(integer)', 'hrmd.cursor_take(integer, text)', 'hrmd.cursor_move(integer, text, bigint)',
                'hrmd.chunk_append(bigint, bigint[], double precision[], bigint[], integer[], integer, bigint, bigint, double precision, double precision, double precision)',
                'hrmd.chunk_replace(bigint, bigint[], double precision[], bigint[], integer[], integer, bigint, bigint, bigint, bigint, double precision, double precision, double precision)',
                'hrmd.chunk_drop(bigint)',
                'hrmd.synced_put(integer, text, integer, integer, text, bigint, bigint, bigint, double precision, smallint, boolean, text, bigint)',
                'hrmd.synced_drop(integer, text, bigint[])']
            LOOP
                EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
                EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO hrmd_gateway', f);
            END LOOP;
        END $$;
        REVOKE UPDATE, DELETE, TRUNCATE ON hrmd.gateway, hrmd.cursor, hrmd.chunk, hrmd.synced_sample, hrmd.tombstone FROM hrmd_gateway;
        """

    /// Workouts, each as its gateway last sent it: one row per (gateway, workout id), its
    /// events as two arrays of one length. Gateways read every row and change their own only
    /// through `workout_put` and `workout_drop` (row security keeps those to the caller's
    /// gateways, as for samples). Bounds as the local store's: 4096 events, names of at most
    /// 256 bytes. `hrmd.workouts` shows them with gateway and source by name, times as
    /// timestamptz.
    private static let workouts = """
        CREATE TABLE hrmd.workout (
            id bigserial PRIMARY KEY,
            gateway_id integer NOT NULL REFERENCES hrmd.gateway,
            uuid text NOT NULL CHECK (octet_length(uuid) BETWEEN 1 AND 64),
            source_id integer NOT NULL REFERENCES hrmd.source,
            person text CHECK (octet_length(person) <= 256),
            device text CHECK (octet_length(device) <= 256),
            activity text NOT NULL CHECK (octet_length(activity) <= 64),
            start_time bigint NOT NULL,
            end_time bigint CHECK (end_time >= start_time),
            event_types text[] NOT NULL,
            event_times bigint[] NOT NULL,
            anchor bigint NOT NULL,
            changed bigint NOT NULL DEFAULT nextval('hrmd.change_seq'),
            UNIQUE (gateway_id, uuid),
            CHECK (array_ndims(event_types) IS NULL OR (array_ndims(event_types) = 1 AND array_ndims(event_times) = 1)),
            CHECK (cardinality(event_types) = cardinality(event_times) AND cardinality(event_types) <= 4096),
            CHECK (array_position(event_types, NULL) IS NULL AND array_position(event_times, NULL) IS NULL)
        );
        CREATE INDEX workout_time ON hrmd.workout (start_time);
        CREATE INDEX workout_changed ON hrmd.workout (changed);
        ALTER TABLE hrmd.workout ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY workout_read ON hrmd.workout FOR SELECT USING (true);
        CREATE POLICY workout_own ON hrmd.workout FOR ALL USING (hrmd.owns_gateway(gateway_id)) WITH CHECK (hrmd.owns_gateway(gateway_id));
        GRANT SELECT ON hrmd.workout TO hrmd_gateway, hrmd_analyst;
        CREATE FUNCTION hrmd.workout_put(
            gateway_ref integer, workout_uuid text, source_ref integer, person_name text, device_identifier text,
            activity_name text, start_at bigint, end_at bigint, types text[], times bigint[], local_anchor bigint
        ) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            INSERT INTO hrmd.workout (gateway_id, uuid, source_id, person, device, activity, start_time, end_time,
                event_types, event_times, anchor)
            VALUES (gateway_ref, workout_uuid, source_ref, person_name, device_identifier, activity_name, start_at, end_at,
                types, times, local_anchor)
            ON CONFLICT (gateway_id, uuid) DO UPDATE SET
                source_id = EXCLUDED.source_id, person = EXCLUDED.person, device = EXCLUDED.device, activity = EXCLUDED.activity,
                start_time = EXCLUDED.start_time, end_time = EXCLUDED.end_time, event_types = EXCLUDED.event_types,
                event_times = EXCLUDED.event_times, anchor = EXCLUDED.anchor, changed = nextval('hrmd.change_seq')
            $$;
        CREATE FUNCTION hrmd.workout_drop(gateway_ref integer, workout_uuids text[]) RETURNS bigint
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            WITH gone AS (DELETE FROM hrmd.workout WHERE gateway_id = gateway_ref AND uuid = ANY(workout_uuids) RETURNING 1)
            SELECT count(*) FROM gone
            $$;
        REVOKE ALL ON FUNCTION hrmd.workout_put(integer, text, integer, text, text, text, bigint, bigint, text[], bigint[], bigint) FROM PUBLIC;
        REVOKE ALL ON FUNCTION hrmd.workout_drop(integer, text[]) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION hrmd.workout_put(integer, text, integer, text, text, text, bigint, bigint, text[], bigint[], bigint)
            TO hrmd_gateway;
        GRANT EXECUTE ON FUNCTION hrmd.workout_drop(integer, text[]) TO hrmd_gateway;
        CREATE VIEW hrmd.workouts WITH (security_invoker = true) AS
            SELECT g.name AS gateway, w.uuid AS id, s.name AS source, w.person, w.device, w.activity,
                   timestamptz 'epoch' + w.start_time * interval '1 microsecond' AS start_time,
                   timestamptz 'epoch' + w.end_time * interval '1 microsecond' AS end_time,
                   w.event_types, w.event_times
            FROM hrmd.workout w
            JOIN hrmd.gateway g ON g.id = w.gateway_id
            JOIN hrmd.source s ON s.id = w.source_id;
        GRANT SELECT ON hrmd.workouts TO hrmd_gateway, hrmd_analyst;
        """

    /// Events (high and low heart rate, contact lost, battery low, disconnected), each as its
    /// gateway last sent it: one row per (gateway, event id), open (no end) or ended. Gateways
    /// read every row and write their own only through `event_put` and `event_drop` (row security keeps them to
    /// the caller's gateways, as for workouts). `hrmd.events` shows them with gateway and
    /// source by name, times as timestamptz.
    private static let events = """
        CREATE TABLE hrmd.event (
            id bigserial PRIMARY KEY,
            gateway_id integer NOT NULL REFERENCES hrmd.gateway,
            uuid text NOT NULL CHECK (octet_length(uuid) BETWEEN 1 AND 64),
            type text NOT NULL CHECK (octet_length(type) BETWEEN 1 AND 64),
            source_id integer NOT NULL REFERENCES hrmd.source,
            device text CHECK (octet_length(device) <= 256),
            person text CHECK (octet_length(person) <= 256),
            start_time bigint NOT NULL,
            latest_time bigint NOT NULL CHECK (latest_time >= start_time),
            end_time bigint CHECK (end_time = latest_time),
            threshold double precision,
            extreme double precision,
            anchor bigint NOT NULL,
            changed bigint NOT NULL DEFAULT nextval('hrmd.change_seq'),
            UNIQUE (gateway_id, uuid),
            CHECK (device IS NOT NULL OR person IS NOT NULL)
        );
        CREATE INDEX event_time ON hrmd.event (start_time);
        CREATE INDEX event_changed ON hrmd.event (changed);
        ALTER TABLE hrmd.event ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY event_read ON hrmd.event FOR SELECT USING (true);
        CREATE POLICY event_own ON hrmd.event FOR ALL USING (hrmd.owns_gateway(gateway_id)) WITH CHECK (hrmd.owns_gateway(gateway_id));
        GRANT SELECT ON hrmd.event TO hrmd_gateway, hrmd_analyst;
        CREATE FUNCTION hrmd.event_put(
            gateway_ref integer, event_uuid text, type_name text, source_ref integer, device_identifier text, person_name text,
            start_at bigint, latest_at bigint, end_at bigint, threshold_value double precision, extreme_value double precision,
            local_anchor bigint
        ) RETURNS void
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            INSERT INTO hrmd.event (gateway_id, uuid, type, source_id, device, person, start_time, latest_time, end_time,
                threshold, extreme, anchor)
            VALUES (gateway_ref, event_uuid, type_name, source_ref, device_identifier, person_name, start_at, latest_at, end_at,
                threshold_value, extreme_value, local_anchor)
            ON CONFLICT (gateway_id, uuid) DO UPDATE SET
                type = EXCLUDED.type, source_id = EXCLUDED.source_id, device = EXCLUDED.device, person = EXCLUDED.person,
                start_time = EXCLUDED.start_time, latest_time = EXCLUDED.latest_time, end_time = EXCLUDED.end_time,
                threshold = EXCLUDED.threshold, extreme = EXCLUDED.extreme, anchor = EXCLUDED.anchor,
                changed = nextval('hrmd.change_seq')
            $$;
        CREATE FUNCTION hrmd.event_drop(gateway_ref integer, event_uuids text[]) RETURNS bigint
            LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
            WITH gone AS (DELETE FROM hrmd.event WHERE gateway_id = gateway_ref AND uuid = ANY(event_uuids) RETURNING 1)
            SELECT count(*) FROM gone
            $$;
        REVOKE ALL ON FUNCTION hrmd.event_drop(integer, text[]) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION hrmd.event_drop(integer, text[]) TO hrmd_gateway;
        REVOKE ALL ON FUNCTION hrmd.event_put(integer, text, text, integer, text, text, bigint, bigint, bigint,
            double precision, double precision, bigint) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION hrmd.event_put(integer, text, text, integer, text, text, bigint, bigint, bigint,
            double precision, double precision, bigint) TO hrmd_gateway;
        CREATE VIEW hrmd.events WITH (security_invoker = true) AS
            SELECT g.name AS gateway, e.uuid AS id, e.type, s.name AS source, e.device, e.person,
                   timestamptz 'epoch' + e.start_time * interval '1 microsecond' AS start_time,
                   timestamptz 'epoch' + e.latest_time * interval '1 microsecond' AS latest_time,
                   timestamptz 'epoch' + e.end_time * interval '1 microsecond' AS end_time,
                   e.threshold, e.extreme
            FROM hrmd.event e
            JOIN hrmd.gateway g ON g.id = e.gateway_id
            JOIN hrmd.source s ON s.id = e.source_id;
        GRANT SELECT ON hrmd.events TO hrmd_gateway, hrmd_analyst;
        """

    /// The view `hrmd.samples` (without its leading `CREATE`): chunk samples, and each sample
    /// under a sync identifier in its highest version as `synced` (a table or view of synced
    /// samples) holds them. Migration 3 made it over every gateway's rows; migration 4 over the
    /// rows of each identity's first gateway.
    private static func samplesView(latestOf synced: String) -> String {
        """
        VIEW hrmd.samples WITH (security_invoker = true) AS
            SELECT g.name AS gateway, c.type, s.name AS source, d.identifier AS device,
                   timestamptz 'epoch' + u.start * interval '1 microsecond' AS start_time,
                   timestamptz 'epoch' + CASE WHEN c.duration IS NULL THEN u.start + round(u.value * 1000)::bigint
                                              ELSE u.start + c.duration END * interval '1 microsecond' AS end_time,
                   u.value, c.sensor_location, c.sensor_contact, NULL::text AS sync_identifier
            FROM hrmd.chunk c
            JOIN hrmd.gateway g ON g.id = c.gateway_id
            JOIN hrmd.source s ON s.id = c.source_id
            LEFT JOIN hrmd.device d ON d.id = c.device_id,
            unnest(c.starts, c.vals) AS u(start, value)
            UNION ALL
            SELECT g.name, x.type, s.name, d.identifier,
                   timestamptz 'epoch' + x.start_time * interval '1 microsecond',
                   timestamptz 'epoch' + x.end_time * interval '1 microsecond',
                   x.value, x.sensor_location, x.sensor_contact, x.sync_identifier
            FROM (SELECT DISTINCT ON (source_id, sync_identifier) * FROM \(synced)
                  ORDER BY source_id, sync_identifier, sync_version DESC, id) x
            JOIN hrmd.gateway g ON g.id = x.gateway_id
            JOIN hrmd.source s ON s.id = x.source_id
            LEFT JOIN hrmd.device d ON d.id = x.device_id;
        """
    }
}
