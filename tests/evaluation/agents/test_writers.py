"""Writers: reply parsing, generation settings, the OpenAI-compatible writer against a real local server,
the writer's context (system prompt, history, images)."""

from __future__ import annotations

import base64

import pytest

from bspatial.evaluation.agents import prompts
from bspatial.evaluation.agents.api import METHODS
from bspatial.evaluation.agents.prompts import Message
from bspatial.evaluation.agents.writers import (GENERATION_PRESETS, GenerationSettings, OpenAIWriter, ReplyError,
                                                ScriptedWriter, make_writer, parse_reply, reference_program)

from .writer_server import CannedChatServer, fenced

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")


def test_parse_reply_takes_the_last_block_defining_run():
    reply = ("<think>maybe ```python\ndef run(api):\n    pass\n```</think>Plan: look, then reach.\n"
             "```python\nHELPER = 1\n```\nand\n```python\nimport math\ndef run(api):\n    api.wait(1)\n```\n")
    plan, source = parse_reply(reply)
    assert source == "import math\ndef run(api):\n    api.wait(1)\n"
    assert plan.startswith("Plan: look, then reach.") and "think" not in plan


@pytest.mark.parametrize("reply", ["no code at all", "```python\nx = 1\n```", "def run(api):\n    pass\n"])
def test_a_reply_without_a_run_block_is_refused(reply):
    with pytest.raises(ReplyError, match="no ```python block defining run"):
        parse_reply(reply)


def test_generation_settings():
    paper = GENERATION_PRESETS["paper-qwen"].body()
    assert paper == {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.0, "presence_penalty": 1.5,
                     "chat_template_kwargs": {"enable_thinking": True}}
    assert GENERATION_PRESETS["default"].body() == {}
    with pytest.raises(ValueError, match="top_p must be in \\(0, 1\\], got 1.5"):
        GenerationSettings(top_p=1.5)
    with pytest.raises(ValueError, match="top_k must be a positive int or None, got 0"):
        GenerationSettings(top_k=0)


def test_make_writer_refuses_bad_specs():
    with pytest.raises(ValueError, match="writer must be 'scripted' or 'openai:<base url>#<model>', got 'gpt'"):
        make_writer("gpt", "reach_plate")
    with pytest.raises(ValueError, match="got 'openai:http://x/v1'"):
        make_writer("openai:http://x/v1", "reach_plate")


def test_scripted_writer_answers_with_the_family_program():
    for task in ("reach_plate", "reach_soda_can"):
        plan, source = parse_reply(ScriptedWriter(task).write([], "id"))
        assert source == reference_program(task) and "def run(api):" in source
    compile(reference_program("reach_plate"), "reach.py", "exec")


def test_openai_writer_sends_the_conversation_and_settings():
    system = prompts.system_prompt("reach_plate")
    first = prompts.first_request("reach_plate", "Reach the largest plate.", {"head": PNG, "left_wrist": PNG})
    exchanges = [(Message("user", f"request {i}"), f"reply {i}") for i in range(5)]
    messages = prompts.conversation(system, exchanges, first)
    with CannedChatServer([fenced("def run(api):\n    api.wait(1)\n")]) as server:
        writer = make_writer(server.spec, "reach_plate", GENERATION_PRESETS["paper-qwen"])
        assert isinstance(writer, OpenAIWriter)
        reply = writer.write(messages, "reach_plate/step-00/attempt-0")
    assert parse_reply(reply)[1] == "def run(api):\n    api.wait(1)\n"
    (body,) = server.bodies
    assert body["model"] == "writer" and body["temperature"] == 1.0 and body["top_k"] == 20
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    roles = [m["role"] for m in body["messages"]]
    # system, the last three exchanges (user, assistant each), then the request
    assert roles == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert body["messages"][0]["content"] == system
    assert [m["content"] for m in body["messages"][1:7]] == ["request 2", "reply 2", "request 3", "reply 3",
                                                            "request 4", "reply 4"]
    last = body["messages"][-1]["content"]
    assert [p["type"] for p in last] == ["image_url", "image_url", "text"]
    assert last[0]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert "Reach the largest plate." in last[2]["text"]


def test_the_system_prompt_holds_every_part():
    text = " ".join(prompts.system_prompt("reach_plate").split())   # the prompt's paragraphs are wrapped
    for method in METHODS:
        assert f"- {method}(" in text
    assert "move_ee_to(p, arm: str = auto, speed: float | None = None, use_torso: bool = False)" in text
    for part in ("never receives object poses", "numpy, math, re, cv2, PIL, scipy", "100 perception calls",
                 "first contact", "x forward, y left, z up", "rows counted from the bottom"):
        assert part in text
    assert prompts.system_prompt("reach_plate") != prompts.system_prompt("place_bowl_in_cabinet")
    assert "instructed layer" in " ".join(prompts.system_prompt("place_bowl_in_cabinet").split())
