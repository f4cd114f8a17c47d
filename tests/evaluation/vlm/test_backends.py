"""The backend protocol, the seeded chance backend and the model-spec registry."""

from __future__ import annotations

import json

import pytest

from bspatial.evaluation.vlm import backends
from bspatial.evaluation.vlm.backend_api import Request, Response, VLMBackend
from bspatial.evaluation.vlm.backend_chance import ChanceBackend
from bspatial.evaluation.vlm.backends import load_backend, parse_spec
from bspatial.scoring import PointStatus, parse_choice, parse_point

OPTIONS = ("above", "under", "front", "behind")


def _requests(n: int, kind: str = "choice") -> list[Request]:
    return [Request(f"q{i}", "prompt", (), kind, OPTIONS if kind == "choice" else ()) for i in range(n)]


def test_chance_is_deterministic_and_independent_of_batching():
    requests = _requests(40) + _requests(10, "point")
    one_batch = [r.text for r in ChanceBackend(seed=3).generate(requests)]
    singles = [ChanceBackend(seed=3).generate([r])[0].text for r in reversed(requests)][::-1]
    assert one_batch == singles
    assert one_batch != [r.text for r in ChanceBackend(seed=4).generate(requests)]


def test_chance_answers_in_the_prompts_formats():
    choice = ChanceBackend(seed=0).generate(_requests(200))
    letters = [parse_choice(r.text, OPTIONS).letter for r in choice]
    assert set(letters) == {"A", "B", "C", "D"}  # uniform over the four options
    assert all(r.text == f"{l}.{OPTIONS['ABCD'.index(l)]}" for r, l in zip(choice, letters))
    for response in ChanceBackend(seed=0).generate(_requests(50, "point")):
        target = json.loads(response.text)["results"]["target"]
        assert set(target) == {"x", "y"} and all(isinstance(v, int) and 0 <= v <= 1000 for v in target.values())
        assert parse_point(response.text).status is PointStatus.PARSED
        assert isinstance(response, Response) and response.latency_s >= 0


def test_chance_satisfies_the_protocol():
    backend = load_backend("chance")
    assert isinstance(backend, VLMBackend)
    assert backend.spec == "chance:0" and backend.identity() == {"kind": "chance", "seed": 0}
    assert load_backend("chance:5").identity()["seed"] == 5
    assert load_backend("chance", seed=9).spec == "chance:9"
    with pytest.raises(ValueError, match="must be an int"):
        load_backend("chance:x")


def test_spec_parsing():
    assert parse_spec("openai:http://127.0.0.1:8000/v1#tiny") == ("openai", "http://127.0.0.1:8000/v1#tiny")
    assert parse_spec("transformers:Qwen/Qwen3.5-4B") == ("transformers", "Qwen/Qwen3.5-4B")
    assert parse_spec("Qwen/Qwen3.5-4B") == ("transformers", "Qwen/Qwen3.5-4B")
    assert parse_spec("/abs/ckpt") == ("transformers", "/abs/ckpt")


def test_unknown_kinds_list_the_known_kinds():
    with pytest.raises(ValueError, match=r"known kinds: chance .*openai .*transformers"):
        load_backend("gpt:4")


def test_registering_a_kind_twice_raises(monkeypatch):
    monkeypatch.setattr(backends, "_REGISTRY", dict(backends._REGISTRY))
    with pytest.raises(ValueError, match="already registered"):
        backends.register_backend("chance")(lambda argument: None)
    backends.register_backend("echo")(lambda argument: ChanceBackend(seed=1, spec=f"echo:{argument}"))
    assert load_backend("echo:x").spec == "echo:x"
