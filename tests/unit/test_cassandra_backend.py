"""The integration fixture's choice of Cassandra (tests/cassandra_backend.py): HOPRAG_CASSANDRA,
then a testcontainers container when Docker answers, then the local JVM launcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassandra_backend import CASSANDRA_IMAGE, Backend, choose_backend, docker_answers

REPO = Path(__file__).resolve().parents[2]


def _no_probe() -> bool:
    raise AssertionError("Docker must not be probed here")


def test_hoprag_cassandra_wins_and_docker_is_not_probed() -> None:
    got = choose_backend({"HOPRAG_CASSANDRA": " 10.0.0.5:9043,10.0.0.6 "}, _no_probe)
    assert got == Backend("given", "10.0.0.5:9043,10.0.0.6")


def test_a_docker_engine_that_answers_means_a_testcontainers_node() -> None:
    assert choose_backend({}, lambda: True) == Backend("testcontainers")
    assert choose_backend({"HOPRAG_CASSANDRA": "  "}, lambda: True) == Backend("testcontainers")


def test_without_docker_the_local_jvm_launcher_is_used() -> None:
    assert choose_backend({}, lambda: False) == Backend("launcher")


def test_hoprag_no_docker_skips_the_probe_like_the_launcher_does() -> None:
    assert choose_backend({"HOPRAG_NO_DOCKER": "1"}, _no_probe) == Backend("launcher")
    assert choose_backend({"HOPRAG_NO_DOCKER": ""}, lambda: True) == Backend("testcontainers")


@pytest.mark.parametrize("host", ["unix:///nonexistent/docker.sock", "tcp://127.0.0.1:1"])
def test_docker_answers_is_false_when_no_engine_listens(
    monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("DOCKER_HOST", host)
    monkeypatch.delenv("TESTCONTAINERS_HOST_OVERRIDE", raising=False)
    assert docker_answers(timeout=2.0) is False


def test_the_container_image_is_the_compose_files_image() -> None:
    assert CASSANDRA_IMAGE == "cassandra:5.0.8"
    for name in ("compose.yml", "compose-3.yml"):
        assert f"image: {CASSANDRA_IMAGE}" in (REPO / "docker" / name).read_text()
