"""`python -m dsh.cli`: the same as the `dsh` command."""

from __future__ import annotations

from . import main

raise SystemExit(main())
