"""The packaged dense backend (gitive[semantic]: the wordllama package's own weights and tokenizer), as a user
gets it: nothing configured, no network, no torch; search finds what shares no word with the question."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitive.lessons import semantic
from gitive.lessons.static_model import StaticModel, installed

pytestmark = pytest.mark.skipif(installed() is None, reason="gitive[semantic] (the wordllama package) is not installed")

from gitive.index.refresh import fresh_index  # noqa: E402
from gitive.lessons.propose import propose  # noqa: E402
from gitive.lessons.review import review  # noqa: E402
from gitive.team.hive import Hive, open_hive  # noqa: E402
from testing import fixtures, people  # noqa: E402

_NO_NETWORK = ("import socket\n"
               "def _refuse(*a, **k):\n    raise OSError('network refused by the test')\n"
               "socket.socket.connect = _refuse\nsocket.create_connection = _refuse\nsocket.getaddrinfo = _refuse\n")


@pytest.fixture
def hive(bare_remote: Path, make_clone: Callable[[str | Path, str], Path], monkeypatch: pytest.MonkeyPatch) -> Hive:
    clone = make_clone(bare_remote, "alice")
    fixtures.commit_file(clone, "README.md", "# readme\n")
    fixtures.run_git(["push", "--quiet", "origin", "main"], cwd=clone)
    monkeypatch.chdir(clone)
    monkeypatch.delenv(semantic.ENV, raising=False)
    assert people.run_deciding(["init", "--person", "alice"]) == 0
    return open_hive(clone)


def _add(hive: Hive, text: str, applicability: str = "") -> str:
    with fresh_index(hive) as (conn, _):
        made = propose(hive, conn, kind="Gotcha", text=text, applicability=applicability, evidence=["file:README.md"])
        review(hive, conn, made.id, approved=True, note="", signer=people.person_key())
    return made.id


def test_the_packaged_model_embeds_from_site_packages_with_the_network_refused() -> None:
    code = (_NO_NETWORK + "from gitive.lessons.static_model import StaticModel\n"
            "m = StaticModel.packaged()\nv = m.encode(['a driver was assigned twice', ''])\n"
            "import sys, json\nprint(json.dumps([list(v.shape), float(abs(v[0]).sum()) > 0, float(abs(v[1]).sum()),"
            " sorted(x for x in sys.modules if x.split('.')[0] in ('torch', 'wordllama', 'requests'))]))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    shape, filled, empty, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    assert shape == [2, 256] and filled and empty == 0.0 and heavy == []  # nothing of torch, nor wordllama's loader


def test_encode_is_the_mean_of_the_token_vectors() -> None:
    import numpy as np

    model = StaticModel.packaged()
    ids = model.tokenizer.encode("retry the webhook", add_special_tokens=False).ids
    assert np.allclose(model.encode(["retry the webhook"])[0], model.embedding[ids].mean(axis=0), atol=1e-5)
    batch = model.encode(["retry the webhook", "", "a much longer text about the nightly invoice job"])
    assert np.allclose(batch[0], model.encode(["retry the webhook"])[0], atol=1e-6)


def test_on_by_default_the_cli_finds_a_lesson_that_shares_no_word(hive: Hive) -> None:
    """Nothing configured: `gitive lessons search` ranks by meaning too, in a process whose network is refused."""
    wanted = _add(hive, "Customers receive the same text message more than once after a worker restart; "
                        "check the notification log before sending.")
    _add(hive, "Monetary amounts are stored as integer cents.")
    _add(hive, "The orders table needs a GiST index on location for nearest-driver lookups.")
    code = (_NO_NETWORK + "from gitive.cli.main import run\n"
            "run(['lessons', 'search', 'people get duplicate SMS', '--json'])\n")
    env = {k: v for k, v in os.environ.items() if k != semantic.ENV and not k.startswith("HF_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=hive.project.workdir, env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    results = found["results"] if isinstance(found, dict) else found
    assert results and results[0]["id"] == wanted
    with fresh_index(hive) as (conn, _):
        assert conn.execute("SELECT count(*) FROM lesson_vectors").fetchone()[0] == 3  # stored by that search
