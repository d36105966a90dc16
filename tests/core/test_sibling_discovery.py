"""Sibling discovery (`kinds.sibling_paths`) is kept per folder state: one ``stat`` of a settled folder answers
it, and every change of the folder's entries is seen at once (a file added, removed or renamed, a symlink
re-pointed, the modification time set back), and a folder changed too recently for its timestamps to be trusted
is looked at every time. The tests but the last count any folder as settled (`SETTLED_NS` 0): a folder's
status-change time cannot be set back, so it is always recent in a test."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from hlo_lsp.core import kinds
from tests.robustness.cases import SPLIT_DIR, SPLIT_STEM

OLD_NS = 1_600_000_000 * 1_000_000_000  # a modification time long ago


def _settle(folder: Path) -> None:
    os.utime(folder, ns=(OLD_NS, OLD_NS))


@pytest.fixture(autouse=True)
def settled(request, monkeypatch):
    if "recently" not in request.node.name:
        monkeypatch.setattr(kinds, "SETTLED_NS", 0)


@pytest.fixture
def syscalls(monkeypatch) -> list[str]:
    """The names of the stat-like system calls made through `os` (`Path.is_file` and `Path.resolve` use these)."""
    calls: list[str] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, spy)
    return calls


def _split_set(folder: Path, suffixes=("", "-buffer-assignment", "-live-range")) -> Path:
    folder.mkdir(exist_ok=True)
    for suffix in suffixes:
        shutil.copy(SPLIT_DIR / f"{SPLIT_STEM}{suffix}.txt", folder)
    return folder / f"{SPLIT_STEM}.txt"


def test_a_settled_folder_answers_with_one_stat(tmp_path, syscalls):
    hlo = _split_set(tmp_path / "m")
    _settle(hlo.parent)
    first = kinds.sibling_paths(hlo)
    assert set(first) == {kinds.HLO, kinds.ASSIGNMENT, kinds.LIVE_RANGE}
    looked = len(syscalls)
    assert looked > 5  # the first discovery looks at every candidate
    syscalls.clear()
    assert kinds.sibling_paths(hlo) == first
    assert syscalls == ["stat"]  # the folder's, nothing else


def test_a_file_added_or_removed_is_seen_at_once(tmp_path):
    hlo = _split_set(tmp_path / "m")
    _settle(hlo.parent)
    assert kinds.LIVE_RANGE in kinds.sibling_paths(hlo)
    assert kinds.VALUES not in kinds.sibling_paths(hlo)
    shutil.copy(SPLIT_DIR / f"{SPLIT_STEM}-buffer-assignment-values.txt", hlo.parent)
    assert kinds.VALUES in kinds.sibling_paths(hlo)
    _settle(hlo.parent)
    kinds.sibling_paths(hlo)
    (hlo.parent / f"{SPLIT_STEM}-live-range.txt").unlink()
    assert kinds.LIVE_RANGE not in kinds.sibling_paths(hlo)


def test_a_sibling_renamed_away_and_back_is_seen(tmp_path):
    hlo = _split_set(tmp_path / "m")
    live = hlo.parent / f"{SPLIT_STEM}-live-range.txt"
    _settle(hlo.parent)
    assert kinds.LIVE_RANGE in kinds.sibling_paths(hlo)
    live.rename(hlo.parent / "elsewhere.txt")
    assert kinds.LIVE_RANGE not in kinds.sibling_paths(hlo)
    _settle(hlo.parent)
    assert kinds.LIVE_RANGE not in kinds.sibling_paths(hlo)
    (hlo.parent / "elsewhere.txt").rename(live)
    assert kinds.LIVE_RANGE in kinds.sibling_paths(hlo)


def test_a_symlink_repointed_out_of_the_folder_is_left_out(tmp_path):
    hlo = _split_set(tmp_path / "m", suffixes=("",))
    other = _split_set(tmp_path / "other", suffixes=("-live-range",)).parent
    inside_copy = hlo.parent / "kept-live-range.txt"
    shutil.copy(other / f"{SPLIT_STEM}-live-range.txt", inside_copy)
    link = hlo.parent / f"{SPLIT_STEM}-live-range.txt"
    os.symlink(inside_copy.name, link)  # leads to a file in the same folder: a sibling
    _settle(hlo.parent)
    assert kinds.LIVE_RANGE in kinds.sibling_paths(hlo)
    tmp_link = hlo.parent / "next-link"
    os.symlink(other / f"{SPLIT_STEM}-live-range.txt", tmp_link)
    os.replace(tmp_link, link)  # re-pointed out of the folder, as `ln -sfn` does
    assert kinds.LIVE_RANGE not in kinds.sibling_paths(hlo)


def test_a_folder_changed_too_recently_is_looked_at_every_time(tmp_path, syscalls):
    hlo = _split_set(tmp_path / "m")
    _settle(hlo.parent)  # its modification time says long ago; its status-change time says now
    kinds.sibling_paths(hlo)
    syscalls.clear()
    kinds.sibling_paths(hlo)
    assert len(syscalls) > 1  # not kept: a second change within the timestamp's granularity would be missed


def test_a_folder_that_went_away_has_no_siblings(tmp_path):
    hlo = _split_set(tmp_path / "m")
    _settle(hlo.parent)
    assert kinds.sibling_paths(hlo)
    shutil.rmtree(hlo.parent)
    assert kinds.sibling_paths(hlo) == {}
