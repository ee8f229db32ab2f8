"""TaskGroups: the compact task id → group mapping a run's driver keeps for its curve."""

from __future__ import annotations

import pickle
import sys

import pytest

from masbench.harness.task_groups import TaskGroups

GROUPS = {"depth-1-0001": ("depth", 1), "depth-2-0001": ("depth", 2), "gsm8k/test/7": ("gsm8k", None),
          "é-ünïcode": ("gsm8k", None), "a": ("src", None), "ab": ("src", None), "b\x00": ("nul", None)}


def test_every_id_maps_to_its_group_and_others_to_nothing() -> None:
    g = TaskGroups.of(GROUPS)
    assert len(g) == len(GROUPS)
    for task_id, group in GROUPS.items():
        assert g.get(task_id) == group
    # a prefix, an extension, a longer id than any held, an empty id, the NUL-less twin of a NUL-ended id
    for other in ("depth-1-000", "depth-1-00011", "x" * 100, "", "abc", "b", "depth-3-0001"):
        assert g.get(other) is None, other


def test_codes_of_a_page_at_once_match_one_by_one() -> None:
    g = TaskGroups.of(GROUPS)
    page = ["zzz", *GROUPS, "a", "x" * 40]
    codes = g.codes(page).tolist()
    assert codes[0] == -1 and codes[-1] == -1
    assert [g.groups[c] for c in codes[1:-2]] == list(GROUPS.values())
    assert g.groups[codes[-2]] == ("src", None)
    assert g.codes([]).tolist() == []


def test_items_round_trip_and_pickle_keeps_it() -> None:
    g = TaskGroups.of(GROUPS)
    assert dict(g.items()) == GROUPS
    back = pickle.loads(pickle.dumps(g))
    assert dict(back.items()) == GROUPS and back.codes(list(GROUPS)).tolist() == g.codes(list(GROUPS)).tolist()


def test_a_repeated_id_is_refused() -> None:
    with pytest.raises(ValueError, match="repeat"):
        TaskGroups([("t1", ("a", None)), ("t1", ("b", None))])


def test_an_empty_mapping_holds_nothing() -> None:
    g = TaskGroups.of({})
    assert len(g) == 0 and g.get("t") is None and g.codes(["t", "u"]).tolist() == [-1, -1]


def test_it_holds_an_id_in_its_bytes_and_four_more_far_below_a_dict() -> None:
    n = 20_000
    groups = {f"task-{i:06d}": ("depth", i % 7) for i in range(n)}
    g = TaskGroups.of(groups)
    assert g.nbytes() == n * (len("task-000000") + 4)
    # the dict of tuples it replaces: its table and a tuple per task, the id strings apart
    as_dict = sys.getsizeof(groups) + sum(sys.getsizeof(v) for v in groups.values())
    assert g.nbytes() < as_dict / 3
