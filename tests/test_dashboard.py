"""docs/grafana/dsh.json and README's PromQL name only metrics a running host exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dsh.testing import load_plugin, running_host
from dsh.web.metrics import HttpMetrics
from dsh_tool_schedule import SchedulePlugin

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"\bdsh_[a-z0-9_]+")
# What the exposition adds to a family's name, and what a query may add to it.
_SUFFIXES = ("_bucket", "_count", "_sum", "_total", "_created")


def queries() -> list[str]:
    dashboard = json.loads((ROOT / "docs/grafana/dsh.json").read_text(encoding="utf-8"))
    found = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Metrics and logs", 1)[1].split("\n## ", 1)[0]
    found += re.findall(r"^    (.*dsh_.*)$", section, re.M)  # the README's indented PromQL
    return found


async def test_every_query_names_a_metric_the_host_the_app_and_the_schedule_plugin_export() -> None:
    async with running_host() as host:
        await load_plugin(host, SchedulePlugin)
        text = (host.metrics.render() + HttpMetrics().metrics.render()).decode()
    exported = {family.name for family in text_string_to_metric_families(text)}
    found = queries()
    assert len(found) >= 10
    for query in found:
        for name in _NAME.findall(query):
            base = next((name.removesuffix(s) for s in _SUFFIXES if name.endswith(s)), name)
            assert base in exported or name in exported, f"{name} in {query!r} is not exported"
