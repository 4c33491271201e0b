"""Every P4Runtime name the controller uses exists in the built p4info.

controller/p4names.py is the only place the controller spells a table,
action, parameter, match field or counter; the controller checks them against
a pipeline's p4info before it writes (p4names.check), and these tests run that
check on the built p4info, so a rename in p4src/ that p4names does not follow
fails here rather than as a P4Runtime error on a live switch.
Needs build/v1model/p4incast.p4info.txtpb (`make build`); skipped with the
reason when it is not built. tests/tna checks that TNA's names equal v1model's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any

import finsy as fy
import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from p4incast.controller import app, config, p4names, reconcile
from p4incast.controller.config import Pipeline
from p4incast.controller.errors import ControllerError
from p4incast.controller.stats import PortStats

P4INFO = Pipeline.default().p4info


@pytest.fixture(scope="module")
def info() -> p4info_pb2.P4Info:
    if not P4INFO.is_file():
        pytest.skip(f"{P4INFO} not built (`make build` needs p4c-bm2-ss)")
    return text_format.Parse(P4INFO.read_text(), p4info_pb2.P4Info())


def _named(objs: Iterable[Any], name: str) -> Any:
    """The p4info object whose name or alias is `name` (finsy accepts either)."""
    found = [o for o in objs if name in (o.preamble.name, o.preamble.alias)]
    assert len(found) == 1, f"{name!r}: {len(found)} objects in {P4INFO} have that name"
    return found[0]


def test_tables_match_fields_and_actions(info: p4info_pb2.P4Info) -> None:
    actions_by_id = {a.preamble.id: a for a in info.actions}
    assert set(p4names.MATCH_FIELDS) == set(p4names.TABLE_ACTION)
    for table_name, keys in p4names.MATCH_FIELDS.items():
        table = _named(info.tables, table_name)
        assert tuple(m.name for m in table.match_fields) == keys, table_name
        refs = {actions_by_id[r.id].preamble.alias for r in table.action_refs}
        assert p4names.TABLE_ACTION[table_name] in refs, (table_name, refs)


def test_action_parameters(info: p4info_pb2.P4Info) -> None:
    for action_name, params in p4names.ACTION_PARAMS.items():
        action = _named(info.actions, action_name)
        assert tuple(p.name for p in action.params) == params, action_name


def test_counters_and_their_sizes(info: p4info_pb2.P4Info) -> None:
    size = {name: _named(info.counters, name).size for name in p4names.COUNTERS}
    assert size[p4names.INGRESS_DROPS] == len(p4names.DROP_REASONS)
    assert size[p4names.QUEUE_DEPTH] >= p4names.HIST_PORTS * p4names.HIST_BUCKETS
    for name in (p4names.ROUTED, *p4names.ECN_COUNTERS.values()):
        assert size[name] == p4names.PORT_MAX + 1, name  # indexed by port_t
    assert set(p4names.ECN_COUNTERS) <= {f.name for f in fields(PortStats)}


def test_every_name_constant_is_in_the_p4info(info: p4info_pb2.P4Info) -> None:
    # Any str constant added to p4names must name something in the pipeline.
    known = set()
    for objs in (info.tables, info.actions, info.counters):
        for o in objs:
            known |= {o.preamble.name, o.preamble.alias}
    known |= {m.name for t in info.tables for m in t.match_fields}
    known |= {p.name for a in info.actions for p in a.params}
    names = {k: v for k, v in vars(p4names).items() if k.isupper() and isinstance(v, str)}
    assert names and {k: v for k, v in names.items() if v not in known} == {}


def test_built_entries_use_only_p4names_and_encode(info: p4info_pb2.P4Info) -> None:
    # The builders pass action parameters by keyword: check them too, on real entries.
    cfg = config.parse(
        {
            "ports": {1: {"mac": "00:aa:00:00:00:01", "ecn": {"mode": "tail", "k": 3}}},
            "routes": [
                {"prefix": "10.0.0.0/8", "port": 1, "dmac": "00:bb:00:00:00:01"},
                {"prefix": "2001:db8::/32", "port": 1, "dmac": "00:bb:00:00:00:01"},
            ],
        }
    )
    schema = fy.P4Schema(P4INFO)
    built = reconcile.desired_entries(cfg)
    assert {e.table_id for e in built} == set(p4names.MATCH_FIELDS)
    for entry in built:
        assert entry.match is not None and isinstance(entry.action, fy.P4TableAction)
        assert tuple(entry.match) == p4names.MATCH_FIELDS[entry.table_id]
        assert entry.action.name == p4names.TABLE_ACTION[entry.table_id]
        assert tuple(entry.action.args) == p4names.ACTION_PARAMS[entry.action.name]
        table_id = _named(info.tables, entry.table_id).preamble.id
        assert entry.encode(schema).table_entry.table_id == table_id


def test_the_built_p4info_has_everything_the_controller_uses(info: p4info_pb2.P4Info) -> None:
    assert p4names.missing(fy.P4Schema(P4INFO)) == []


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        ('"routes_v4"', '"ipv4_routes"', "no table routes_v4"),
        ('name: "drop_k"', 'name: "drop_at"', "action set_ecn_policy takes mode, k, drop_at"),
        ('"routed_stats"', '"routed"', "no counter routed_stats"),
    ],
)
def test_a_renamed_name_is_one_error_before_anything_is_written(
    info: p4info_pb2.P4Info, tmp_path: Path, old: str, new: str, named: str
) -> None:
    """The P4 renames something the controller uses: apply refuses, before it
    connects, with one error naming it and the p4info."""
    text = P4INFO.read_text()
    assert old in text
    renamed = tmp_path / "renamed.p4info.txtpb"
    renamed.write_text(text.replace(old, new))
    pipeline = Pipeline.default()
    assert pipeline.config is not None
    cfg = config.parse(
        {
            "switch": {"address": "127.0.0.1:1"},  # nothing listens: it must not get there
            "pipeline": {"p4info": str(renamed), "config": str(pipeline.config)},
            "ports": {1: {"mac": "00:aa:00:00:00:01"}},
        }
    )
    with pytest.raises(ControllerError) as err:
        asyncio.run(app.apply(cfg))
    assert str(err.value).startswith(f"{renamed}: {named}")
    assert "\n" not in str(err.value)


def test_the_generated_names_are_the_built_p4infos(info: p4info_pb2.P4Info) -> None:
    """controller/p4info_names.py is what scripts/gen_p4names.py makes of the built
    p4info: a P4 change that renames or reshapes an object without regenerating
    (make build does) fails here, and a rename the controller uses at import."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gen_p4names", Path(__file__).resolve().parents[2] / "scripts" / "gen_p4names.py"
    )
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = Path(p4names.__file__).with_name("p4info_names.py").read_text()
    assert gen.render(P4INFO) == committed
    named = [ln for ln in committed.splitlines() if ln.startswith("TABLE_") and ' = "' in ln]
    assert len(named) == len(info.tables)  # every table of the p4info has its constant
