"""The PostgreSQL store's tables, as numbered migrations, and how they are applied.

`migrate(connection, schema)` brings a schema up to `SCHEMA_VERSION` in one
transaction, holding a transaction-level advisory lock for that schema, so
any number of hosts (and `dsh store migrate`) may start at once: the first
applies what is missing, the others wait and then find nothing to do. DDL
is transactional in PostgreSQL, so a failed migration leaves the previous
version. `migrations` records each applied version. A database newer than
this dsh is refused (`SchemaTooNew`), never downgraded.

The tables (in the schema `?schema=` names, `dsh` by default):

- `sessions`: one row per stored log — its `header` (canonical JSON text),
  `created_at`, lineage, `length`, `title` and `preview` (kept up to date by
  every write, so a list decodes no log), an `incarnation` (new at creation
  and at every restore) and `deleted_at` (the trash: a trashed log keeps
  its rows). A stored id is unique, and so is a trashed one. `log_id` is the
  row's own key, so a new Session may reuse the id of one in the trash.
- `events`: one row per event keyed `(log_id, seq)`, with its `type` and its
  `body`: the event's canonical JSON text (`SessionEvent.to_json()`), so a
  read returns byte-identical JSON.
- `leases`: who writes which Session (`owner`, `epoch`, `expires_at`, on the
  database's clock). Rows stay after a release, so epochs only grow.
- `wake` (version 2): the wake index shared by every host, one row per cold
  Session that needs waking (`wake_at`, epoch ms) or whose entry is `dirty`
  (it went live and has not gone cold cleanly since), with the claim of the
  host waking it (`claimed_by`, `claimed_until`).
- `inbox` (version 3): messages posted on a host that does not own their
  Session (`text`, `time_zone`, `via`: the host it was posted to), in order
  of their `id`, until the owner stored them.
- `remote_actions` (version 6): a person's actions posted on a host that
  does not own their Session (`plugin`, `action`, `args` as JSON text, `via`),
  until `expires_at` (when the poster stops waiting), claimed by the owner
  (`taken_by`) and answered (`answer`: JSON text) for the poster, which then
  removes the row.
- `attention`, `attention_alerts` (version 7): what `dsh.attention.postgres`
  keeps for every host: per Session how far alerts were derived (`checked`)
  and its read mark (`read_through`), and its alerts, one per event `seq`.

Version 8 gives the inbox a `message` column: the text as a JSON string,
which holds any character (a `text` column refuses NUL, so a message with
one could not be posted through another host); `text` stays for rows an
older host posted.

Version 9 adds `search_messages` and `search_indexed`: every stored
message by its terms, for `?q=` (`dsh.search.postgres`).

Version 4 adds a trigger on `sessions` that notifies the schema's `events`
channel with the Session id whenever a log is created or grows (in the
writing transaction, so only once committed).

Version 5 makes `dsh_create` and `dsh_append` insert their events
themselves. Until then they called `dsh_insert_events`, a SQL function:
one with a `SET` clause is never inlined, and PostgreSQL (before 18) plans a
SQL function's statement again at every call, while PL/pgSQL keeps a
statement's plan for the connection — one append of one event took about
a quarter longer for that alone.

Writes go through two functions, so that each is one statement (one round
trip, one transaction) with every check inside it: `dsh_create` and
`dsh_append` check the writer's lease (`dsh_fence`, which holds the lease
row FOR SHARE until the commit, so a takeover waits for the write), check
the cursor while updating the Session's row (which locks it), insert the
events and update the summary. They raise
SQLSTATEs of their own (`ERRORS`), which the backend turns into the
`Backend` contract's exceptions.

Version 10 adds `dsh_append_round`: the appends of several Sessions in one
statement and one transaction (the backend's group commit), each
`dsh_append` in a subtransaction of its own whose error is returned, not
raised, so one Session's refusal does not undo the others'.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from ..errors import SchemaTooNew

__all__ = ["ERRORS", "MIGRATIONS", "SCHEMA_VERSION", "Migration", "SchemaTooNew", "migrate"]

# SQLSTATEs raised by the functions below (class "DS" is not used by PostgreSQL).
ERRORS = {
    "not_found": "DS404",
    "exists": "DS409",
    "cursor": "DS412",
    "lease_lost": "DS410",
    "lease_held": "DS423",
}

# Two-key advisory lock: (this constant, hashtext(schema)).
_LOCK_KEY = 0x64736800  # "dsh\0"


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    summary: str
    statements: str


_V1 = """
CREATE SEQUENCE incarnations;

CREATE TABLE sessions (
    log_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text   NOT NULL,
    header      text   NOT NULL,
    created_at  bigint NOT NULL,
    parent_id   text,
    forked_at   bigint,
    length      bigint NOT NULL DEFAULT 0,
    title       text,
    preview     text,
    incarnation bigint NOT NULL DEFAULT nextval('incarnations'),
    deleted_at  bigint
);
CREATE UNIQUE INDEX sessions_stored ON sessions (id) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX sessions_trashed ON sessions (id) WHERE deleted_at IS NOT NULL;

CREATE TABLE events (
    log_id bigint NOT NULL REFERENCES sessions (log_id),
    seq    bigint NOT NULL,
    type   text   NOT NULL,
    body   text   NOT NULL,
    PRIMARY KEY (log_id, seq)
);
CREATE INDEX events_by_type ON events (log_id, type, seq);

CREATE TABLE leases (
    session_id  text        PRIMARY KEY,
    owner       text        NOT NULL,
    epoch       bigint      NOT NULL,
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);

-- The writer's lease: p_owner NULL is a writer without a lease (a command, a
-- test), which may write only a Session no host holds.
CREATE FUNCTION dsh_fence(p_id text, p_owner text, p_epoch bigint) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    held record;
BEGIN
    SELECT owner, epoch, expires_at > clock_timestamp() AS valid INTO held
        FROM leases WHERE session_id = p_id FOR SHARE;
    IF p_owner IS NULL THEN
        IF FOUND AND held.valid THEN
            RAISE EXCEPTION USING ERRCODE = 'DS423',
                MESSAGE = format('session %s is live on host %s', p_id, held.owner);
        END IF;
    ELSIF NOT FOUND OR held.owner <> p_owner OR held.epoch <> p_epoch OR NOT held.valid THEN
        RAISE EXCEPTION USING ERRCODE = 'DS410',
            MESSAGE = format('session %s: the lease of host %s (epoch %s) is no longer valid',
                             p_id, p_owner, p_epoch);
    END IF;
END $$;

CREATE FUNCTION dsh_insert_events(p_log bigint, p_start bigint, p_types text[], p_bodies text[])
RETURNS void LANGUAGE sql SET search_path FROM CURRENT AS $$
    INSERT INTO events (log_id, seq, type, body)
    SELECT p_log, p_start + item.n - 1, item.type, item.body
    FROM unnest(p_types, p_bodies) WITH ORDINALITY AS item (type, body, n)
$$;

CREATE FUNCTION dsh_create(
    p_id text, p_header text, p_created_at bigint, p_parent text, p_forked_at bigint,
    p_types text[], p_bodies text[], p_title text, p_preview text,
    p_owner text, p_epoch bigint
) RETURNS bigint LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    new_log bigint;
BEGIN
    PERFORM dsh_fence(p_id, p_owner, p_epoch);
    INSERT INTO sessions (id, header, created_at, parent_id, forked_at, length, title, preview)
        VALUES (p_id, p_header, p_created_at, p_parent, p_forked_at,
                coalesce(cardinality(p_types), 0), p_title, p_preview)
        ON CONFLICT (id) WHERE deleted_at IS NULL DO NOTHING
        RETURNING log_id INTO new_log;
    IF new_log IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'DS409',
            MESSAGE = format('session %s is already stored', p_id);
    END IF;
    PERFORM dsh_insert_events(new_log, 0, p_types, p_bodies);
    RETURN new_log;
END $$;

-- p_set_title: the batch holds a session/title event, whose title (maybe NULL) wins.
-- One UPDATE both checks the cursor and locks the row (a concurrent append at the
-- same cursor waits, then finds the length moved); the reasons for a refusal are
-- looked up only when there is one.
CREATE FUNCTION dsh_append(
    p_id text, p_start bigint, p_types text[], p_bodies text[],
    p_set_title boolean, p_title text, p_preview text, p_owner text, p_epoch bigint
) RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    target bigint;
    stored bigint;
BEGIN
    PERFORM dsh_fence(p_id, p_owner, p_epoch);
    UPDATE sessions SET
        length = length + cardinality(p_types),
        title = CASE WHEN p_set_title THEN p_title ELSE title END,
        preview = coalesce(preview, p_preview)
    WHERE id = p_id AND deleted_at IS NULL AND length = p_start
    RETURNING log_id INTO target;
    IF target IS NULL THEN
        SELECT length INTO stored FROM sessions WHERE id = p_id AND deleted_at IS NULL;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'DS404',
                MESSAGE = format('session %s is not stored', p_id);
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'DS412', MESSAGE = stored::text;
    END IF;
    PERFORM dsh_insert_events(target, p_start, p_types, p_bodies);
END $$;
"""

# The wake index of every host (`dsh.persistence.postgres.wake`): when each cold
# Session next needs to be live. A claim (`claimed_by`, `claimed_until`) is the
# right of one host to wake the Session now; every write of the entry clears it.
_V2 = """
CREATE TABLE wake (
    session_id    text    PRIMARY KEY,
    wake_at       bigint,
    dirty         boolean NOT NULL DEFAULT false,
    claimed_by    text,
    claimed_until timestamptz
);
CREATE INDEX wake_due ON wake (wake_at) WHERE wake_at IS NOT NULL;
CREATE INDEX wake_dirty ON wake (session_id) WHERE dirty;
"""

# Messages posted on a host that does not own their Session (`postgres.inbox`).
_V3 = """
CREATE TABLE inbox (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text        NOT NULL,
    text       text        NOT NULL,
    time_zone  text,
    via        text        NOT NULL,
    posted_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX inbox_by_session ON inbox (session_id, id);
"""

# Every stored batch wakes the hosts that follow the Session (`postgres.feed`): the
# notification goes out at the commit of the write that stored it, or never.
_V4 = """
CREATE FUNCTION dsh_stored_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('dsh_events.' || left(md5(TG_TABLE_SCHEMA), 16), NEW.id);
    RETURN NULL;
END $$;

CREATE TRIGGER sessions_stored AFTER INSERT ON sessions
    FOR EACH ROW EXECUTE FUNCTION dsh_stored_events();
CREATE TRIGGER sessions_grew AFTER UPDATE OF length ON sessions
    FOR EACH ROW WHEN (OLD.length IS DISTINCT FROM NEW.length)
    EXECUTE FUNCTION dsh_stored_events();
"""

# The same two writes as version 1, each inserting its events in its own body,
# where PL/pgSQL keeps the statement's plan (see the module docstring).
_V5 = """
CREATE OR REPLACE FUNCTION dsh_create(
    p_id text, p_header text, p_created_at bigint, p_parent text, p_forked_at bigint,
    p_types text[], p_bodies text[], p_title text, p_preview text,
    p_owner text, p_epoch bigint
) RETURNS bigint LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    new_log bigint;
BEGIN
    PERFORM dsh_fence(p_id, p_owner, p_epoch);
    INSERT INTO sessions (id, header, created_at, parent_id, forked_at, length, title, preview)
        VALUES (p_id, p_header, p_created_at, p_parent, p_forked_at,
                coalesce(cardinality(p_types), 0), p_title, p_preview)
        ON CONFLICT (id) WHERE deleted_at IS NULL DO NOTHING
        RETURNING log_id INTO new_log;
    IF new_log IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'DS409',
            MESSAGE = format('session %s is already stored', p_id);
    END IF;
    INSERT INTO events (log_id, seq, type, body)
        SELECT new_log, item.n - 1, item.type, item.body
        FROM unnest(p_types, p_bodies) WITH ORDINALITY AS item (type, body, n);
    RETURN new_log;
END $$;

CREATE OR REPLACE FUNCTION dsh_append(
    p_id text, p_start bigint, p_types text[], p_bodies text[],
    p_set_title boolean, p_title text, p_preview text, p_owner text, p_epoch bigint
) RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    target bigint;
    stored bigint;
BEGIN
    PERFORM dsh_fence(p_id, p_owner, p_epoch);
    UPDATE sessions SET
        length = length + cardinality(p_types),
        title = CASE WHEN p_set_title THEN p_title ELSE title END,
        preview = coalesce(preview, p_preview)
    WHERE id = p_id AND deleted_at IS NULL AND length = p_start
    RETURNING log_id INTO target;
    IF target IS NULL THEN
        SELECT length INTO stored FROM sessions WHERE id = p_id AND deleted_at IS NULL;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'DS404',
                MESSAGE = format('session %s is not stored', p_id);
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'DS412', MESSAGE = stored::text;
    END IF;
    INSERT INTO events (log_id, seq, type, body)
        SELECT target, p_start + item.n - 1, item.type, item.body
        FROM unnest(p_types, p_bodies) WITH ORDINALITY AS item (type, body, n);
END $$;

DROP FUNCTION dsh_insert_events(bigint, bigint, text[], text[]);
"""

# Actions posted on a host that does not own their Session (`postgres.remote_actions`).
_V6 = """
CREATE TABLE remote_actions (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id  text        NOT NULL,
    plugin      text        NOT NULL,
    action      text        NOT NULL,
    args        text        NOT NULL,
    via         text        NOT NULL,
    posted_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at  timestamptz NOT NULL,
    taken_by    text,
    answer      text,
    answered_at timestamptz
);
CREATE INDEX remote_actions_by_session ON remote_actions (session_id, id);
CREATE INDEX remote_actions_expiry ON remote_actions (expires_at);
"""

# Alerts and read marks every host shares (`dsh.attention.postgres`).
_V7 = """
CREATE TABLE attention (
    session_id   text   PRIMARY KEY,
    checked      bigint,
    read_through bigint NOT NULL DEFAULT 0
);
CREATE TABLE attention_alerts (
    session_id text   NOT NULL,
    seq        bigint NOT NULL,
    title      text   NOT NULL,
    body       text   NOT NULL,
    tag        text   NOT NULL,
    at         bigint NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX attention_alerts_by_time ON attention_alerts (at);
"""

# A message of any character through the inbox (`dsh.persistence.postgres.text`).
_V8 = """
ALTER TABLE inbox ADD COLUMN message text;
ALTER TABLE inbox ALTER COLUMN text DROP NOT NULL;
"""

# Every stored message by its terms (`dsh.search.postgres`).
_V9 = """
CREATE TABLE search_messages (
    session_id text     NOT NULL,
    seq        bigint   NOT NULL,
    text       text     NOT NULL,
    terms      tsvector NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX search_messages_terms ON search_messages USING gin (terms);
CREATE TABLE search_indexed (
    session_id text   PRIMARY KEY,
    through    bigint NOT NULL
);
"""

# One round of appends of several Sessions (`PostgresBackend`'s group commit): each is
# `dsh_append` in a subtransaction of its own (a PL/pgSQL block with an EXCEPTION
# clause), so one refused append rolls back alone and the others commit together.
# Item `n` takes `p_counts[n]` events from the flattened `p_types`/`p_bodies`; one
# row per item answers, with the SQLSTATE and message of its error or NULLs.
# (`OTHERS` does not catch a cancellation: that aborts the whole round.)
_V10 = """
CREATE FUNCTION dsh_append_round(
    p_ids text[], p_starts bigint[], p_counts integer[], p_types text[], p_bodies text[],
    p_set_titles boolean[], p_titles text[], p_previews text[], p_owners text[],
    p_epochs bigint[]
) RETURNS TABLE (item integer, failed text, reason text)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    first integer := 1;
    last integer;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
        last := first + p_counts[i] - 1;
        item := i;
        failed := NULL;
        reason := NULL;
        BEGIN
            PERFORM dsh_append(p_ids[i], p_starts[i], p_types[first:last],
                               p_bodies[first:last], p_set_titles[i], p_titles[i],
                               p_previews[i], p_owners[i], p_epochs[i]);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS failed = RETURNED_SQLSTATE, reason = MESSAGE_TEXT;
        END;
        RETURN NEXT;
        first := last + 1;
    END LOOP;
END $$;
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions, events and leases", _V1),
    Migration(2, "the wake index", _V2),
    Migration(3, "the inbox", _V3),
    Migration(4, "notifications of stored events", _V4),
    Migration(5, "writes that keep their insert's plan", _V5),
    Migration(6, "remote actions", _V6),
    Migration(7, "alerts and read marks", _V7),
    Migration(8, "inbox messages of any character", _V8),
    Migration(9, "the search index", _V9),
    Migration(10, "appends of several Sessions in one transaction", _V10),
)
SCHEMA_VERSION = MIGRATIONS[-1].version


async def migrate(connection: psycopg.AsyncConnection[object], schema: str) -> tuple[int, int]:
    """Bring `schema` up to `SCHEMA_VERSION`; returns (version before, version after).

    One transaction under the schema's advisory lock (see the module
    docstring). Raises `SchemaTooNew`, or psycopg's error for a failure.
    """
    name = sql.Identifier(schema)
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_KEY, schema)
        )
        await connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
        await connection.execute(sql.SQL("SET LOCAL search_path TO {}").format(name))
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS migrations ("
            " version integer PRIMARY KEY, summary text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await connection.execute("SELECT coalesce(max(version), 0) FROM migrations")
        row = await cursor.fetchone()
        before = int(row[0]) if row is not None else 0  # type: ignore[index]
        if before > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"its dsh schema {schema!r} is at version {before}, newer than this dsh "
                f"(version {SCHEMA_VERSION}); upgrade dsh"
            )
        for migration in MIGRATIONS:
            if migration.version > before:
                await connection.execute(migration.statements.encode())
                await connection.execute(
                    "INSERT INTO migrations (version, summary) VALUES (%s, %s)",
                    (migration.version, migration.summary),
                )
    return before, SCHEMA_VERSION
