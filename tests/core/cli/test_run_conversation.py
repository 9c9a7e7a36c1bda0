"""`run --auto-tools N` and `run --conversation FILE`: every exchange printed, exported, replayed."""
from __future__ import annotations

import json

import pytest

from core.live.capture import read_jsonl
from core.live.tool_mocks import TOOL_PRESETS
from tests.core.cli.test_run import main_py

pytestmark = pytest.mark.slow   # subprocesses end to end (the fast loop leaves them out)


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("loop")
    tools = tmp / "tools.json"
    tools.write_text(json.dumps(TOOL_PRESETS["weather + calculator + time"]))
    p = main_py("run", "--prompt", "Plan my day in Paris.", "--tools", str(tools), "--model", "tool-rounds",
                "--auto-tools", "5", "--export", str(tmp / "c.jsonl"), "--export", str(tmp / "c.har"),
                "--export", str(tmp / "c.md"))
    return p, tmp


def test_the_loop_runs_every_round_and_prints_each_exchange(loop):
    p, _ = loop
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 16                      # 4 providers x (3 tool rounds + the answer)
    for name in ("demo-openai-chat", "demo-openai-responses", "demo-anthropic", "demo-gemini"):
        mine = [ln for ln in lines if ln.startswith(name + " ")]
        assert [ln.rsplit("turn ", 1)[1] for ln in mine] == ["0", "1", "2", "3"]
        assert [("finish tool_calls" in ln) for ln in mine] == [True, True, True, False]


def test_the_capture_holds_the_whole_conversation_and_replays_every_turn(loop):
    _, tmp = loop
    header = json.loads((tmp / "c.jsonl").read_text().splitlines()[0])
    assert header["version"] == 2 and header["runs"] == 16
    runs = read_jsonl(tmp / "c.jsonl")
    anth = [r for r in runs if r.name == "demo-anthropic"]
    assert len(anth) == 4 and len(anth[-1].spec.conversation.turns) == 7   # user, (assistant, results) x 3
    r = main_py("replay", "--headless", str(tmp / "c.jsonl"))
    assert r.returncode == 0
    results = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(results) == 16 and sorted({x["turn"] for x in results}) == [0, 1, 2, 3]
    last = [x for x in results if x["provider"] == "demo-gemini"][-1]
    assert "calculator" in "".join(b["text"] or "" for b in last["blocks"])


def test_har_has_one_entry_per_exchange_and_md_shows_the_conversation(loop):
    _, tmp = loop
    entries = json.loads((tmp / "c.har").read_text())["log"]["entries"]
    assert len(entries) == 16 and sorted({e["_streamscope"]["turn"] for e in entries}) == [0, 1, 2, 3]
    assert "function_call_output" in next(e for e in entries if e["_streamscope"]["turn"] == 3
                                          and e["_streamscope"]["provider"]["format"] == "openai-responses"
                                          )["request"]["postData"]["text"]
    md = (tmp / "c.md").read_text()
    assert "## Conversation: demo-anthropic" in md and "demo-gemini (turn 3)" in md
    section = md.split("## Conversation: demo-gemini")[1].split("\n## ")[0]
    assert "**Tool call** `get_weather`" in section and "**Tool result** `get_time`" in section
    assert "### Turn 8: Assistant (gemini)" in section


def test_a_conversation_file_starts_the_exchange(tmp_path):
    conv = {"format": "streamscope-conversation", "version": 1, "turns": [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "format": "anthropic", "parts": [
            {"type": "thinking", "text": "easy", "signature": "c2ln"},
            {"type": "text", "text": "Paris."}]}]}
    f = tmp_path / "conv.json"
    f.write_text(json.dumps(conv))
    p = main_py("run", "--conversation", str(f), "--prompt", "What is the capital of Italy?", "--json",
                "--provider", "demo-openai-chat", "--provider", "demo-anthropic",
                "--export", str(tmp_path / "x.jsonl"))
    assert p.returncode == 0, p.stderr
    assert "turn 1" in p.stdout and "Rome" in p.stdout
    runs = read_jsonl(tmp_path / "x.jsonl")
    chat = next(r for r in runs if r.format == "openai-chat").request.body["messages"]
    assert chat == [{"role": "user", "content": "What is the capital of France?"},
                    {"role": "assistant", "content": "Paris."},
                    {"role": "user", "content": "What is the capital of Italy?"}]
    anth = next(r for r in runs if r.format == "anthropic").request.body["messages"][1]["content"]
    assert anth[0] == {"type": "thinking", "thinking": "easy", "signature": "c2ln"}    # its own: passed back
    assert "Chat Completions has no field for earlier reasoning" in p.stderr


@pytest.mark.parametrize("content, why", [("{", "not JSON"), ('{"turns": [{"role": "robot"}]}', "turn 0: role"),
                                          ('[{"role": "assistant", "parts": [{"type": "tool_result", "id": "x"}]}]',
                                           "turn 0, part 0"),
                                          ("[" * 100000 + "]" * 100000, "not JSON: JSON nested too deep to parse"),
                                          ('{"turns": [{"role": "user", "content": "hi"}], "tools": [{"name": "f", '
                                           '"parameters": {"type": "object", "properties": {"a": '
                                           + '{"x":' * 900 + "1" + "}" * 900 + "}}}]}",
                                           "nested deeper than 250 levels")])
def test_a_bad_conversation_file_is_a_usage_error(tmp_path, content, why):
    f = tmp_path / "bad.json"
    f.write_text(content)
    p = main_py("run", "--conversation", str(f), "--prompt", "hi")
    assert p.returncode == 2 and why in p.stderr and "Traceback" not in p.stderr


def test_prompt_is_needed_unless_the_conversation_ends_with_the_user(tmp_path):
    assert "--prompt is required" in main_py("run").stderr
    f = tmp_path / "conv.json"
    f.write_text(json.dumps([{"role": "user", "content": "What is the capital of France?"}]))
    p = main_py("run", "--conversation", str(f), "--provider", "demo-gemini")
    assert p.returncode == 0 and "demo-gemini" in p.stdout


def test_auto_tools_answers_the_calls_a_conversation_ends_with(tmp_path):
    """A conversation that ends with the assistant's tool calls: `--auto-tools N` answers them with the mock tools
    (as the window's Auto does), where it asked for a --prompt (and one would have left the calls unanswered)."""
    f = tmp_path / "pending.json"
    f.write_text(json.dumps({"turns": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "format": "anthropic", "parts": [
            {"type": "tool_call", "id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}]}]}))
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "get_weather", "description": "the weather",
                                  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]))
    assert "--prompt is required" in main_py("run", "--conversation", str(f), "--provider", "demo-anthropic").stderr
    p = main_py("run", "--conversation", str(f), "--tools", str(tools), "--auto-tools", "1", "--provider",
                "demo-anthropic", "--export", str(tmp_path / "x.jsonl"))
    assert p.returncode == 0, p.stdout + p.stderr
    first = read_jsonl(tmp_path / "x.jsonl")[0].request.body["messages"]
    assert first[-1]["role"] == "user" and first[-1]["content"][0]["type"] == "tool_result"
    assert first[-1]["content"][0]["tool_use_id"] == "toolu_1" and "Paris" in json.dumps(first[-1]["content"][0])
