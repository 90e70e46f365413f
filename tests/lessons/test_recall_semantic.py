"""The optional dense backend on a tiny model the tests build: paraphrases found, vectors stored in the index,
nothing loaded or downloaded when it is not configured, a broken model reported and search going on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("model2vec")  # gitive[semantic]; the test extra installs it

from gitive.cli.main import run
from gitive.index.refresh import fresh_index
from gitive.lessons import recall, semantic
from gitive.lessons.propose import propose
from gitive.lessons.review import review
from gitive.team.hive import Hive, open_hive
from gitive.team.projects import project_id
from testing import fixtures, people
from testing.tiny_model import build


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("model") / "tiny")


@pytest.fixture
def hive(bare_remote: Path, make_clone: Callable[[str | Path, str], Path], monkeypatch: pytest.MonkeyPatch) -> Hive:
    clone = make_clone(bare_remote, "alice")
    fixtures.commit_file(clone, "README.md", "# readme\n")
    fixtures.run_git(["push", "--quiet", "origin", "main"], cwd=clone)
    monkeypatch.chdir(clone)
    monkeypatch.delenv(semantic.ENV, raising=False)
    assert people.run_deciding(["init", "--person", "alice"]) == 0
    return open_hive(clone)


def add(hive: Hive, text: str) -> str:
    with fresh_index(hive) as (conn, _):
        made = propose(hive, conn, kind="Gotcha", text=text, evidence=["file:README.md"])
        review(hive, conn, made.id, approved=True, note="", signer=people.person_key())
    return made.id


def find(hive: Hive, query: str, backend: semantic.Backend | None) -> list[str]:
    with fresh_index(hive) as (conn, _):
        return [r["id"] for r in recall.search(conn, query, project=project_id(hive.project), semantic=backend)]


def test_the_dense_path_finds_a_paraphrase_with_no_shared_word(hive: Hive, model: Path) -> None:
    flaky = add(hive, "Intermittent suite failures come from the shared temp dir")
    add(hive, "Refund invoices are rounded per line")
    backend = semantic.Backend(str(model))
    assert flaky not in find(hive, "sporadic pytest", None)  # lexically nothing in common
    assert find(hive, "sporadic pytest", backend)[0] == flaky
    with fresh_index(hive) as (conn, _):
        stored = conn.execute("SELECT count(*), min(length(vector)) FROM lesson_vectors").fetchone()
    assert stored == (2, 16 * 2)  # one float16 vector of 16 dimensions per shown lesson


def test_vectors_follow_new_and_retracted_lessons(hive: Hive, model: Path) -> None:
    from gitive.lessons.retract import retract

    backend = semantic.Backend(str(model))
    first = add(hive, "Intermittent suite failures come from the shared temp dir")
    assert find(hive, "sporadic", backend)[:1] == [first]
    second = add(hive, "Sluggish postgres queries need the statement cache")
    assert find(hive, "lag", backend)[:1] == [second]  # added after the first search: embedded on the next
    with fresh_index(hive) as (conn, _):
        retract(hive, conn, first, "wrong", people.person_key())
    assert first not in find(hive, "sporadic", backend)
    with fresh_index(hive) as (conn, _):
        assert conn.execute("SELECT count(*) FROM lesson_vectors").fetchone() == (1,)


def test_configured_through_git_config_or_the_environment(hive: Hive, model: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.lessons.static_model import installed

    default = semantic.PACKAGED if installed() else None  # on by default once gitive[semantic] is installed
    assert semantic.configured(hive.project) == default
    fixtures.run_git(["config", semantic.CONFIG_KEY, str(model)], cwd=hive.project.workdir)
    assert semantic.for_repo(hive.project).name == str(model)  # type: ignore[union-attr]
    fixtures.run_git(["config", semantic.CONFIG_KEY, "off"], cwd=hive.project.workdir)
    assert semantic.for_repo(hive.project) is None
    monkeypatch.setenv(semantic.ENV, str(model))
    assert semantic.for_repo(hive.project).name == str(model)  # type: ignore[union-attr]  # the environment wins
    for off in ("", "off", "none"):
        monkeypatch.setenv(semantic.ENV, off)
        assert semantic.for_repo(hive.project) is None


def test_the_environment_alone_reaches_the_in_process_search(hive: Hive, model: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """search() picks the configured backend itself: a caller that passes no backend (the daemon, the UI)
    gets the one GITIVE_RECALL_MODEL names."""
    flaky = add(hive, "Intermittent suite failures come from the shared temp dir")
    add(hive, "Refund invoices are rounded per line")
    monkeypatch.setenv(semantic.ENV, "off")
    with fresh_index(hive) as (conn, _):
        assert flaky not in [r["id"] for r in recall.search(conn, "sporadic pytest")]
    monkeypatch.setenv(semantic.ENV, str(model))
    with fresh_index(hive) as (conn, _):
        assert [r["id"] for r in recall.search(conn, "sporadic pytest")][:1] == [flaky]


def test_a_broken_model_is_reported_and_search_goes_on(hive: Hive, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    lesson = add(hive, "Intermittent suite failures come from the shared temp dir")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    backend = semantic.Backend(str(broken))
    assert find(hive, "intermittent", backend) == [lesson]
    assert backend.problem and "did not load" in backend.problem
    monkeypatch.setenv(semantic.ENV, str(broken))
    assert run(["lessons", "search", "intermittent", "--json"]) == 0
    captured = capsys.readouterr()
    assert lesson in captured.out and "did not load" in captured.err


def test_turned_off_nothing_is_imported(hive: Hive) -> None:
    """With the dense backend off, a search process never imports numpy, a tokenizer or a hub client (so
    nothing can be downloaded); the same holds where gitive[semantic] is not installed."""
    add(hive, "Intermittent suite failures come from the shared temp dir")
    code = ("import sys, json\nfrom gitive.cli.main import run\n"
            "run(['lessons', 'search', 'intermittent', '--json'])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('model2vec', 'numpy', "
            "'tokenizers', 'huggingface_hub', 'safetensors', 'wordllama', 'torch'))))\n")
    env = {**os.environ, semantic.ENV: "off"}
    done = subprocess.run([sys.executable, "-c", code], cwd=hive.project.workdir, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_a_hub_name_is_read_from_the_cache_only(hive: Hive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    backend = semantic.Backend("minishlab/potion-base-8M")
    started = __import__("time").monotonic()
    assert backend.model() is None and backend.problem and "did not load" in backend.problem
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # set before model2vec looked: no download was tried
    assert __import__("time").monotonic() - started < 30
