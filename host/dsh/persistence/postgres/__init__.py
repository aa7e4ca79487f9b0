"""The PostgreSQL store: any number of `dsh web` hosts on one database (DESIGN §4).

One idea per module: `settings` (the store URL and dsh's own parameters),
`schema` (the tables as numbered migrations, applied under an advisory
lock), `database` (the connection pool, opened on first use, and clear
connection errors), `backend` (`PostgresBackend`, the `Backend` contract)
`leases` (`PostgresLeases`: which host writes which Session, fenced by
epoch in every write), and what hosts tell each other through the
database: `notify` (LISTEN, reconnecting), `feed` (stored events), `inbox`
(messages), `remote_actions` (actions and their answers), `wake` (the wake
index). Needs the `postgresql` extra: `pip install
'dsh-host[postgresql]'` (psycopg 3 with its pool).
"""

from ..errors import SchemaTooNew
from .backend import PostgresBackend
from .database import Database
from .leases import PostgresLeases
from .schema import SCHEMA_VERSION, migrate
from .settings import PostgresSettings, redacted

__all__ = [
    "SCHEMA_VERSION",
    "Database",
    "PostgresBackend",
    "PostgresLeases",
    "PostgresSettings",
    "SchemaTooNew",
    "migrate",
    "redacted",
]
