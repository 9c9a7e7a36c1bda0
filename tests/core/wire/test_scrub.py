"""core.wire.scrub: a key echoed JSON-escaped or split across events is masked in the bytes, in every format,
without moving a byte (issue 11, item 4)."""
from __future__ import annotations

import json

import pytest

from core.wire.encoders import encode_bytes
from core.wire.formats import FORMATS
from core.wire.pipeline import decode_bytes
from core.wire.scrub import mask_secrets
from core.wire.script import ScriptBlock, ScriptedReply, ScriptUsage

KEY = "sk-live-ABCDEFGH12345"


def _reply(fragments, kind="text"):
    return ScriptedReply(blocks=[ScriptBlock(kind, list(fragments), id="call_1" if kind == "tool_call" else None,
                                             name="f" if kind == "tool_call" else None)],
                         usage=ScriptUsage(5, 7), finish="tool_calls" if kind == "tool_call" else "stop")


def _assert_clean(fmt, masked, original):
    assert len(masked) == len(original), "offsets must survive"
    assert KEY.encode() not in masked
    result = decode_bytes(fmt, masked).result()
    assert KEY not in json.dumps(result, ensure_ascii=False)
    assert result["terminated"] and result["frames"] == decode_bytes(fmt, original).result()["frames"]
    assert not [d for d in result["diagnostics"] if d["code"] == "data-not-json"], "the JSON stays valid"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_key_split_across_two_deltas_is_masked(fmt):
    body = encode_bytes(fmt, _reply(["Your key: ", KEY[:9], KEY[9:], " is safe."]))
    assert KEY in json.dumps(decode_bytes(fmt, body).result())   # (Responses also repeats it whole in .done events)
    masked, count = mask_secrets(fmt, body, [KEY])
    assert count >= 2
    _assert_clean(fmt, masked, body)
    text = decode_bytes(fmt, masked).result()["blocks"][0]["text"]
    assert text.startswith("Your key: ") and text.endswith(" is safe."), "only the deltas holding it are masked"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_key_in_tool_arguments_split_across_fragments_is_masked(fmt):
    if fmt == "gemini":   # Gemini sends whole argument objects: an escaped key inside one is the other test
        pytest.skip("no argument fragments in Gemini")
    args = json.dumps({"token": KEY})
    body = encode_bytes(fmt, _reply([args[:14], args[14:]], kind="tool_call"))
    masked, count = mask_secrets(fmt, body, [KEY])
    assert count >= 1
    _assert_clean(fmt, masked, body)


@pytest.mark.parametrize("fmt", ["openai-chat", "anthropic"])
def test_a_json_escaped_key_is_masked(fmt):
    escaped = "".join("\\u%04x" % ord(c) for c in KEY)
    if fmt == "openai-chat":
        frame = ('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":'
                 '{"content":"key ' + escaped + '"}}]}\n\n')
        body = (frame + 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
                        '"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n').encode()
    else:
        body = ('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
                '"role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
                'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":'
                '{"type":"text","text":""}}\n\n'
                'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":'
                '{"type":"text_delta","text":"key ' + escaped + '"}}\n\n'
                'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
                'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
                '"usage":{"output_tokens":3}}\n\n'
                'event: message_stop\ndata: {"type":"message_stop"}\n\n').encode()
    masked, count = mask_secrets(fmt, body, [KEY])
    assert count == 1
    _assert_clean(fmt, masked, body)


def test_nothing_to_mask_leaves_the_body_as_it_was():
    body = encode_bytes("anthropic", _reply(["nothing secret here"]))
    assert mask_secrets("anthropic", body, [KEY]) == (body, 0)
    assert mask_secrets("anthropic", body, []) == (body, 0)
    assert mask_secrets("anthropic", body, ["ab"]) == (body, 0), "too short to be a secret"


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_callers_decoded_texts_decide_whether_a_split_key_is_looked_for(fmt):
    # the recorder passes the reply's joined texts (it decoded the body already): given them, the result is the
    # same as decoding again; texts that hold no key mean no split key, and the body is not decoded again
    body = encode_bytes(fmt, _reply(["Your key: ", KEY[:9], KEY[9:], " is safe."]))
    texts = [b.get("text") or b.get("arguments") or "" for b in decode_bytes(fmt, body).result()["blocks"]]
    assert mask_secrets(fmt, body, [KEY], decoded_texts=texts) == mask_secrets(fmt, body, [KEY])
    clean = encode_bytes(fmt, _reply(["nothing secret here"]))
    import core.wire.scrub as scrub

    calls = []
    original = scrub.StreamDecoder
    try:
        scrub.StreamDecoder = lambda *a, **k: calls.append(a) or original(*a, **k)
        assert mask_secrets(fmt, clean, [KEY], decoded_texts=["nothing secret here"]) == (clean, 0)
    finally:
        scrub.StreamDecoder = original
    assert calls == []


# -- a key quoted cut short ----------------------------------------------------------------------------------
LONG_KEY = "sk-proj-Q7vXk2mLp9RtZ4wNcB8yHs3JdF6gAe1U"


@pytest.mark.parametrize("quoted", [LONG_KEY[:-3], LONG_KEY[5:], LONG_KEY[:16], LONG_KEY[-16:]])
def test_a_run_of_a_key_from_its_start_or_to_its_end_is_masked_whole(quoted):
    from core.wire.scrub import mask_plain_bytes, mask_text, secret_spans
    text = f"Incorrect API key provided: {quoted}. You can find your API key at ..."
    masked, count = mask_text(text, [LONG_KEY])
    assert count == 1 and masked == text.replace(quoted, "*" * len(quoted))
    assert secret_spans(text, [LONG_KEY]) == [(text.index(quoted), text.index(quoted) + len(quoted))]
    data, count = mask_plain_bytes(text.encode(), [LONG_KEY])
    assert count == 1 and data == masked.encode()


def test_what_is_not_a_run_of_the_key_is_left():
    from core.wire.scrub import mask_text
    other = "sk-proj-Q7vXk2mzzzzzzzzzzzzzzzzzzzzzzzzz"                  # the same first 15 characters only
    for text in (f"key {other}", f"key {LONG_KEY[:15]}", f"key {LONG_KEY[-15:]}", f"key {LONG_KEY[4:-4]}"):
        assert mask_text(text, [LONG_KEY]) == (text, 0)


def test_a_key_and_its_cut_copy_side_by_side_are_each_masked():
    from core.wire.scrub import mask_text
    text = f"{LONG_KEY}{LONG_KEY[:-2]} and {LONG_KEY}"
    masked, count = mask_text(text, [LONG_KEY], "[REDACTED]")
    assert masked == "[REDACTED] and [REDACTED]" and count == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cut_key_split_across_deltas_is_masked(fmt):
    cut = LONG_KEY[:-4]
    body = encode_bytes(fmt, _reply(["Key ", cut[:10], cut[10:], " is wrong."]))
    masked, count = mask_secrets(fmt, body, [LONG_KEY])
    assert count >= 2 and len(masked) == len(body)
    result = json.dumps(decode_bytes(fmt, masked).result())
    assert cut[:16] not in result and cut[-16:] not in result
