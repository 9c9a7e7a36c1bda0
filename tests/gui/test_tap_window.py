"""Run > Tap… end to end: a tap started from the window in front of the in-process emulator on port 0, real
clients (httpx and the official `openai` SDK) through it, the panes, the list, pinning, the status bar, the
setup snippets, stopping and export; and File > Open of a .sse body, a HAR and a VCR cassette."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog

from core.wire.pipeline import StreamDecoder
from tests.gui.conftest import in_loop, run_until

KEY = "sk-tap-window-secret-0123456789"
ANT_KEY = "sk-ant-tap-window-secret-0123456789"
ACCEPTED = QDialog.DialogCode.Accepted.value
FAST = {"x-emulator-speed": "0"}
MSGS = [{"role": "user", "content": "What is the capital of France?"}]


def reply_text(run) -> str:
    return "".join(b.text or "" for b in run.decoder.reply.ordered_blocks() if b.kind == "text")


def decoded_text(fmt: str, body: bytes) -> str:
    """What a client makes of the bytes it received, through the core's own decoder (not the tap's copy)."""
    d = StreamDecoder(fmt)
    d.feed(body)
    d.end()
    return "".join(b.text or "" for b in d.reply.ordered_blocks() if b.kind == "text")


@pytest.fixture
def dialog(qtbot, settings):
    from gui.persisted import PersistedSettings
    from gui.tap_window import TapDialog

    dlg = TapDialog(PersistedSettings(settings))
    qtbot.addWidget(dlg)
    return dlg


@pytest.fixture
def tap(qtbot, loop, dialog, settings):
    """A tap window started as Run > Tap… starts one: the dialog's values (port 0, the emulator)."""
    from gui.tap_window import TapWindow

    dialog.listen_edit.setText("127.0.0.1:0")
    dialog.upstreams_edit.setText("emulator")
    dialog.accept()
    assert dialog.result() == ACCEPTED
    w = TapWindow(dialog.mounts, dialog.host, dialog.port, settings=dialog.settings)
    w.resize(1280, 800)        # (its first size is fitted to the screen: the offscreen one is smaller)
    w.show()
    base = loop.run_until_complete(w.start())
    assert base and base.startswith("http://127.0.0.1:") and not base.endswith(":0")
    yield w
    close(w, loop)


def close(w, loop) -> None:
    """Stop the tap, then close the window (not left to qtbot, which deletes it before a fixture's teardown)."""
    loop.run_until_complete(w.aclose())
    w.close()
    w.deleteLater()


async def chat(base: str, scenario: str = "text", *, key: str = KEY, fast: bool = True) -> tuple[int, bytes]:
    async with httpx.AsyncClient(timeout=30) as c:
        r = await c.post(base + "/v1/chat/completions",
                         json={"model": scenario, "stream": True, "messages": MSGS,
                               "stream_options": {"include_usage": True}},
                         headers={"authorization": f"Bearer {key}", **(FAST if fast else {})})
        return r.status_code, r.content


def settle(w, loop) -> None:
    """Wait until every exchange the tap has begun is in the window (its feed has caught up with the client's
    responses: `sync`), has ended, and the window has shown it."""
    if w.serving:
        assert w.server.sync()
    run_until(loop, lambda: len(w.exchanges()) == w.tap.seen and all(ex.finished for ex in w.exchanges()),
              timeout=30)
    w.update_panes()
    w.scheduler.flush()


# -- the dialog ----------------------------------------------------------------------------------------------
def test_dialog_defaults_checks_and_remembers(dialog, settings):
    from gui.persisted import PersistedSettings
    from gui.tap_window import TapDialog

    assert dialog.listen_edit.text() == "127.0.0.1:8788"
    assert dialog.upstreams_edit.text() == "emulator"
    dialog.listen_edit.setText("127.0.0.1:99999")
    dialog.accept()
    assert dialog.result() != ACCEPTED and "65535" in dialog.error_label.text()
    dialog.listen_edit.setText("0.0.0.0:8788")
    dialog.accept()
    assert dialog.result() != ACCEPTED and "refusing to listen on 0.0.0.0" in dialog.error_label.text()
    dialog.listen_edit.setText("127.0.0.1:0")
    dialog.upstreams_edit.setText("http://192.0.2.7:11434")
    dialog.accept()
    assert dialog.result() != ACCEPTED and "plain http://" in dialog.error_label.text()
    dialog.upstreams_edit.setText("anthropic  local=http://127.0.0.1:11434")
    dialog.accept()
    assert dialog.result() == ACCEPTED
    assert dialog.port == 0 and set(dialog.mounts.named) == {"anthropic", "local"}
    again = TapDialog(PersistedSettings(settings))
    assert again.listen_edit.text() == "127.0.0.1:0"
    assert again.upstreams_edit.text() == "anthropic local=http://127.0.0.1:11434"


def test_a_port_in_use_is_said_and_nothing_listens(qtbot, loop, tap, settings):
    from gui.tap_window import TapWindow

    port = int(tap.base_url.rsplit(":", 1)[1])
    other = TapWindow(tap.tap.mounts, "127.0.0.1", port, settings=settings)
    assert loop.run_until_complete(other.start()) is None
    assert not other.serving
    assert "Could not listen on 127.0.0.1:" in other.listen_label.text()
    assert other.status_label.text().startswith("Not listening")
    close(other, loop)


# -- live panes, the list, the status bar ------------------------------------------------------------------
def test_an_exchange_opens_as_a_live_pane_with_the_reply_the_client_got(tap, loop):
    """A paced stream: the pane is there while it streams; then its text is what the client received."""
    seen_live = []

    async def stream():
        async with httpx.AsyncClient(timeout=30) as c:
            async with c.stream("POST", tap.base_url + "/v1/messages",
                                json={"model": "text", "max_tokens": 64, "stream": True, "messages": MSGS},
                                headers={"x-api-key": ANT_KEY, "anthropic-version": "2023-06-01"}) as r:
                body = b""
                async for chunk in r.aiter_raw():
                    body += chunk
                    if not seen_live and b"text_delta" in body:
                        await asyncio.sleep(0.1)          # the window's layout timer and a repaint
                        ex = tap.exchanges()[0]
                        pane = tap.pane_for(ex)
                        seen_live.append((pane is not None, pane and pane.pane.badge.text(), ex.run.status))
                return r.status_code, body

    status, body = loop.run_until_complete(stream())
    assert status == 200
    assert seen_live == [(True, "streaming", "streaming")]
    settle(tap, loop)
    ex, = tap.exchanges()
    assert ex.run.status == "done" and ex.format == "anthropic"
    assert ex.run.body == body                    # the captured bytes are the bytes the client got
    pane = tap.pane_for(ex)
    assert tap.shown() == [ex]
    shown = pane.pane.text_view.answer_text()
    assert shown and shown == decoded_text("anthropic", body)
    assert pane.pane.badge.text() == "done"
    assert pane.request_label.text() == "POST /v1/messages"
    from gui.panetext import request_text
    assert "/v1/messages" in request_text(ex.run) and ANT_KEY not in request_text(ex.run)   # the Request tab


@pytest.mark.slow
def test_the_openai_sdk_through_the_window_gets_the_pane_text(tap, loop):
    openai = pytest.importorskip("openai")

    async def go() -> str:
        c = openai.AsyncOpenAI(base_url=tap.base_url + "/v1", api_key=KEY, max_retries=0,
                               default_headers=FAST)
        text = ""
        stream = await c.chat.completions.create(model="text", messages=MSGS, stream=True)
        async for ch in stream:
            for choice in ch.choices:
                text += choice.delta.content or ""
        r = await c.responses.create(model="text", input="Hello", stream=True)
        out = ""
        async for e in r:
            if e.type == "response.output_text.delta":
                out += e.delta
        await c.close()
        return text, out

    chat_text, responses_text = loop.run_until_complete(go())
    settle(tap, loop)
    newest, oldest = tap.exchanges()
    assert (oldest.format, newest.format) == ("openai-chat", "openai-responses")
    assert tap.pane_for(oldest).pane.text_view.answer_text() == chat_text != ""
    assert tap.pane_for(newest).pane.text_view.answer_text() == responses_text != ""
    assert tap.shown() == [newest, oldest]         # following: the newest first


def test_the_list_shows_each_exchange_newest_first_and_the_status_bar_counts(tap, loop):
    from gui.exchange_list import DURATION, FORMAT, METHOD, PATH, STATUS, TOKENS

    assert tap.status_label.text() == f"Listening on {tap.base_url} · 0 exchanges seen"
    for scenario in ("text", "tool-call"):
        status, _body = loop.run_until_complete(chat(tap.base_url, scenario))
        assert status == 200
    async def models():
        async with httpx.AsyncClient() as c:
            return (await c.get(tap.base_url + "/v1/models", headers={"authorization": f"Bearer {KEY}"})).status_code
    assert loop.run_until_complete(models()) == 200
    settle(tap, loop)
    m = tap.list_model
    assert m.rowCount() == 3
    cell = lambda r, c: m.index(r, c).data()     # noqa: E731
    assert [cell(r, METHOD) for r in range(3)] == ["GET", "POST", "POST"]
    assert [cell(r, PATH) for r in range(3)] == ["/v1/models", "/v1/chat/completions", "/v1/chat/completions"]
    assert [cell(r, FORMAT) for r in range(3)][1:] == ["openai-chat", "openai-chat"]
    assert cell(1, STATUS) == "done · 200" and cell(2, STATUS) == "done · 200"
    run = m.exchange(1).run
    assert cell(1, DURATION).endswith("ms")
    u = run.reply.usage
    assert cell(1, TOKENS) == f"{u.input_tokens:,} / {u.output_tokens:,}"
    assert tap.status_label.text() == f"Listening on {tap.base_url} · 3 exchanges seen"
    # the JSON answer's pane says where its body is, not that "the reply was empty"
    from gui.panetext import empty_reply_text, request_text

    models_run = m.exchange(0).run
    assert empty_reply_text(models_run).startswith("(not a stream: a JSON reply of ")
    assert models_run.body.decode() in request_text(models_run)


def test_a_call_that_did_not_stream_shows_its_reply_tokens_and_one_frame(tap, loop):
    """An application that does not stream: its whole JSON reply is read as the stream of it would be."""
    from gui.exchange_list import TOKENS

    async def whole():
        async with httpx.AsyncClient(timeout=30) as c:
            r = await c.post(tap.base_url + "/v1/chat/completions", json={"model": "tool-call", "messages": MSGS},
                             headers={"authorization": f"Bearer {KEY}", **FAST})
            return r.json()
    answer = loop.run_until_complete(whole())
    settle(tap, loop)
    ex = tap.list_model.exchange(0)
    call = answer["choices"][0]["message"]["tool_calls"][0]
    [block] = [b for b in ex.run.reply.ordered_blocks() if b.kind == "tool_call"]
    assert (block.id, block.name, block.arguments) == (call["id"], call["function"]["name"],
                                                       call["function"]["arguments"])
    usage = answer["usage"]
    assert tap.list_model.index(0, TOKENS).data() == f"{usage['prompt_tokens']:,} / {usage['completion_tokens']:,}"
    pane = tap.pane_for(ex)
    c = pane.controller
    c.refresh()
    assert c.frames.rowCount() == 1 and c.blocks.rowCount() >= 1
    assert "· not streamed ·" in pane.pane.format_label.text()


def test_the_collector_counts_the_tap_window_as_streaming_while_exchanges_are_open(tap, loop, monkeypatch):
    import gui.tap_window as tw

    said = []
    monkeypatch.setattr(tw.MainThreadGC, "streaming", classmethod(lambda cls, busy, owner="window":
                                                                   said.append((busy, owner))))
    assert loop.run_until_complete(chat(tap.base_url, "long"))[0] == 200
    settle(tap, loop)
    run_until(loop, lambda: (False, tap) in said)
    assert said[0] == (True, tap) and said[-1] == (False, tap)


def test_the_lists_columns_fit_their_cells_without_resizing_on_every_tick(tap, loop):
    """Widths are fitted when a row comes or ends, not by ResizeToContents (which asks every cell on each tick:
    under firehoses each of those calls waited for the GIL): every cell still shows whole."""
    from PySide6.QtWidgets import QHeaderView

    from gui.exchange_list import PATH

    header = tap.list_view.horizontalHeader()
    assert all(header.sectionResizeMode(c) != QHeaderView.ResizeToContents
               for c in range(tap.list_model.columnCount()))
    for c in range(tap.list_model.columnCount()):
        tap.list_view.setColumnWidth(c, 12)      # (too narrow for anything: only fitting widens them)
    for scenario in ("text", "tool-call", "long"):
        assert loop.run_until_complete(chat(tap.base_url, scenario))[0] == 200
    settle(tap, loop)
    m, view = tap.list_model, tap.list_view
    metrics = view.fontMetrics()
    for col in range(m.columnCount()):
        if col == PATH:
            continue
        texts = [m.index(r, col).data() for r in range(m.rowCount())] + [m.headerData(col, Qt.Horizontal)]
        widest = max(metrics.horizontalAdvance(t) for t in texts if t)
        assert view.columnWidth(col) >= widest, (col, texts)
        # and as wide as Qt itself would size the cells (its delegate's margins, the check box)
        assert view.columnWidth(col) >= view.sizeHintForColumn(col), (col, texts)
    tap.resize(1920, 1080)                       # (with the room for it, a short path shows whole: else it elides)
    tap.split.splitterMoved.emit(900, 1)
    tap.split.setSizes([900, tap.split.width() - 900])
    loop.run_until_complete(asyncio.sleep(0.1))
    assert view.columnWidth(PATH) >= metrics.horizontalAdvance(m.index(0, PATH).data())


def test_as_many_panes_are_shown_as_fit_the_window(tap, loop):
    """The window keeps the size it is given (1024 px wide shows two panes, 1920 px four); the list picks the
    others. Pinned ones stay shown whatever the width."""
    from gui.pane import MIN_WIDTH
    from gui.tap_window import MAX_SHOWN

    for _ in range(5):
        loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    for size, count in (((1920, 1080), MAX_SHOWN), ((1024, 700), 2), ((1280, 800), 3)):
        tap.resize(*size)                                      # (the window follows by itself)
        run_until(loop, lambda: len(tap.shown()) == count, timeout=5)
        assert (tap.width(), tap.height()) == size          # no pane widens the window
        shown = tap.shown()
        assert len(shown) == count, size
        assert shown == tap.exchanges()[:count]               # following: the newest
        assert all(tap.pane_for(ex).width() >= MIN_WIDTH for ex in shown)
    ex = tap.exchanges()
    assert tap.set_pinned(ex[4], True) and tap.set_pinned(ex[3], True)
    tap.resize(700, 600)                                       # room for one pane: the two pinned stay
    settle(tap, loop)
    assert tap.shown() == [ex[4], ex[3]]


def test_a_wide_window_gives_the_list_room_and_its_columns_start_at_their_headers(tap, loop):
    """The columns start as wide as their headers (not the header's default 100 px, which a check box column kept:
    fitting only widens); a wide window widens the list while MAX_SHOWN panes still fit, until the user moves
    the split."""
    from gui.tap_window import LIST_WIDTH, MAX_SHOWN

    header = tap.list_view.horizontalHeader()
    assert [tap.list_view.columnWidth(c) for c in range(tap.list_model.columnCount())] == [
        header.sectionSizeHint(c) for c in range(tap.list_model.columnCount())]
    for _ in range(MAX_SHOWN):
        loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    tap.resize(1280, 800)
    run_until(loop, lambda: len(tap.shown()) == 3, timeout=5)
    assert tap.split.sizes()[0] == LIST_WIDTH
    tap.resize(1920, 1080)
    run_until(loop, lambda: len(tap.shown()) == MAX_SHOWN, timeout=5)
    assert tap.split.sizes()[0] > LIST_WIDTH
    tap.split.splitterMoved.emit(400, 1)        # (as a drag of the handle says it)
    tap.split.setSizes([400, tap.split.width() - 400])
    tap.resize(1900, 1080)
    loop.run_until_complete(asyncio.sleep(0.05))
    assert tap.split.sizes()[0] == 400


def test_panes_are_made_ahead_while_idle_and_replaced_ones_freed_one_per_turn(tap, loop):
    """Spares: made once the tap idles, as many as are shown, and the next exchanges' panes are those spares
    (made at once they held the window 10-40 ms each); retired panes are freed later, one per loop turn."""
    from PySide6.QtWidgets import QApplication

    run_until(loop, lambda: len(tap.spares) == tap.shown_limit(), timeout=10)
    spares = list(tap.spares)
    limit = tap.shown_limit()
    assert all(p.exchange is None and not p.isVisible() for p in spares) and tap.shown() == []
    loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    first = tap.exchanges()[0]
    pane = tap.pane_for(first)
    assert pane is spares[0] and pane.isVisible() and pane.exchange is first
    assert pane.pane.text_view.answer_text() == reply_text(first.run) != ""
    run_until(loop, lambda: len(tap.spares) == limit, timeout=10)       # made again once the tap idles
    destroyed = []
    pane.destroyed.connect(lambda *_: destroyed.append(True))
    for _ in range(limit):                                              # the first exchange's pane is retired
        loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    assert first not in tap.shown() and tap.pane_for(first) is None
    run_until(loop, lambda: QApplication.sendPostedEvents() or bool(destroyed), timeout=5)
    assert destroyed and not tap._retired


def test_a_tap_process_that_dies_is_said_and_what_it_saw_stays(tap, loop, tmp_path):
    import os
    import signal

    loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    seen = tap.exchanges()[0]
    os.kill(tap.server._proc.pid, signal.SIGKILL)
    run_until(loop, lambda: not tap.serving, timeout=15)
    assert tap.statusBar().currentMessage() == "The tap stopped: the tap's process ended"
    assert tap.stop_button.text() == "Stopped" and tap.exchanges() == [seen] and seen.run.status == "done"
    from core.live.importers import read_capture

    opened = read_capture(tap.export_exchanges(tmp_path / "after.jsonl"))
    assert [reply_text(r) for r in opened.runs] == [reply_text(seen.run)] != [""]


def test_pinning_keeps_two_shown_and_picking_replaces_following(tap, loop):
    from gui.exchange_list import PIN
    from gui.tap_window import MAX_SHOWN

    tap.resize(1920, 1080)                         # (room for MAX_SHOWN panes)
    for _ in range(3):
        loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    first3 = tap.exchanges()[::-1]                 # oldest first
    assert tap.set_pinned(first3[0], True)
    # a click on the list's pin box pins without picking the row
    view = tap.list_view
    rect = view.visualRect(tap.list_model.index(tap.list_model.row_of(first3[1]), PIN))
    from PySide6.QtTest import QTest
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())
    assert tap.pinned == [first3[0], first3[1]]
    assert tap.follow and not view.selectionModel().selectedRows()
    assert tap.list_model.index(tap.list_model.row_of(first3[1]), PIN).data(Qt.CheckStateRole) == Qt.Checked
    assert not tap.set_pinned(first3[2], True)    # two at most
    assert "pinned already" in tap.statusBar().currentMessage()
    for _ in range(3):
        loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    newest = tap.exchanges()
    shown = tap.shown()
    assert len(shown) == MAX_SHOWN
    assert shown[:2] == [first3[0], first3[1]]     # pinned stay shown, leftmost
    assert shown[2:] == newest[:2]                 # then the newest
    assert tap.pane_for(first3[0]).pin_button.text() == "Pinned"
    # picking a row shows it (after the pinned) and stops following
    tap.pick([first3[2]])
    assert not tap.follow and not tap.follow_box.isChecked()
    assert tap.shown() == [first3[0], first3[1], first3[2]]
    loop.run_until_complete(chat(tap.base_url))
    settle(tap, loop)
    assert tap.shown() == [first3[0], first3[1], first3[2]]    # a new exchange does not push it away
    # unpinning from the pane's strip, then following again
    tap.pane_for(first3[0]).pin_button.click()
    assert tap.pinned == [first3[1]] and tap.shown() == [first3[1], first3[2]]
    tap.follow_box.setChecked(True)
    assert tap.shown() == [first3[1]] + tap.exchanges()[:3]
    assert all(tap.pane_for(ex).isVisibleTo(tap) for ex in tap.shown())     # panes built again are shown
    # a pane built again for an exchange shown earlier has its whole reply
    pane = tap.pane_for(tap.exchanges()[0])
    assert pane.pane.text_view.answer_text() == reply_text(tap.exchanges()[0].run) != ""


def test_copy_buttons_put_the_setup_snippets_on_the_clipboard(tap):
    clients = [row.client for row in tap.snippets]
    assert clients == ["openai", "anthropic", "google-genai", "curl"]
    openai_row = tap.snippets[0]
    assert openai_row.text.text() == f"export OPENAI_BASE_URL={tap.base_url}/v1"
    openai_row.copy_button.click()
    assert QApplication.clipboard().text() == f"export OPENAI_BASE_URL={tap.base_url}/v1"
    tap.snippets[2].copy_button.click()
    assert QApplication.clipboard().text() == f"genai.Client(http_options={{'base_url': '{tap.base_url}'}})"
    assert tap.statusBar().currentMessage() == "Copied the google-genai setup"


async def stalled_exchange(tap, got: dict) -> asyncio.Future:
    """Start a client on the `stall` scenario through the tap (its status and body land in `got` once its
    response ends) and return its task once the tap has forwarded its first bytes."""
    async def client():
        async with httpx.AsyncClient(timeout=30) as c:
            async with c.stream("POST", tap.base_url + "/v1/chat/completions",
                                json={"model": "stall", "stream": True, "messages": MSGS},
                                headers={"authorization": f"Bearer {KEY}"}) as r:
                got["status"] = r.status_code
                got["body"] = b"".join([chunk async for chunk in r.aiter_raw()])   # ends when it is stopped

    task = asyncio.ensure_future(client())
    while not tap.exchanges() or tap.exchanges()[0].run.metrics.bytes == 0:
        await asyncio.sleep(0.02)
    return task


def test_a_tap_panes_stop_ends_that_exchange_alone_and_the_tap_goes_on(tap, loop):
    got = {}

    async def scenario():
        client = await stalled_exchange(tap, got)
        tap.scheduler.flush()
        got["ex"] = ex = tap.exchanges()[0]
        pane = tap.pane_for(ex).pane
        assert pane.stop_button.isEnabled()
        pane.stop_button.click()
        await asyncio.wait_for(client, 10)     # the client's response ended cleanly
        return await chat(tap.base_url)        # the tap still forwards

    status, body = loop.run_until_complete(scenario())
    first = got["ex"]
    assert got["status"] == 200 and got["body"] == first.run.body != b""
    assert first.run.status == "cancelled" and first.run.error["message"] == "stopped in StreamScope"
    assert status == 200 and "Paris" in decoded_text("openai-chat", body)
    assert tap.serving
    run_until(loop, lambda: all(ex.run.finished for ex in tap.exchanges()))
    tap.scheduler.flush()
    assert not tap.pane_for(first).pane.stop_button.isEnabled()


def test_stopping_ends_an_open_exchange_cleanly_on_both_sides(tap, loop):
    got = {}

    async def scenario():
        client = await stalled_exchange(tap, got)
        assert "1 in flight" in tap.status_label.text()
        tap.stop_button.click()
        await asyncio.wait_for(client, 10)     # the client's response ended (no exception: a clean end)
        await tap.stop()

    loop.run_until_complete(scenario())
    ex, = tap.exchanges()
    assert got["status"] == 200 and got["body"] == ex.run.body != b""
    assert ex.run.status == "cancelled" and ex.run.error["type"] == "cancelled"
    assert not tap.serving
    tap.scheduler.flush()
    assert tap.pane_for(ex).pane.badge.text() == "cancelled"
    assert tap.status_label.text() == "Stopped · 1 exchange seen"
    assert tap.stop_button.text() == "Stopped" and not tap.stop_button.isEnabled()
    with pytest.raises(httpx.ConnectError):
        loop.run_until_complete(chat(tap.base_url))


def test_export_writes_every_exchange_with_the_keys_redacted(tap, loop, tmp_path):
    from core.live.importers import read_capture

    loop.run_until_complete(chat(tap.base_url, "text"))
    loop.run_until_complete(chat(tap.base_url, "tool-call"))
    settle(tap, loop)
    for ext in (".jsonl", ".har", ".yaml"):
        out = tap.export_exchanges(tmp_path / f"tap{ext}")
        text = out.read_text(encoding="utf-8")
        assert KEY not in text
        assert "/v1/chat/completions" in text
        opened = read_capture(out)
        if ext != ".yaml":                         # a cassette has no names (its interactions are numbered)
            assert [r.name for r in opened.runs] == [ex.name for ex in reversed(tap.exchanges())]
        assert [reply_text(r) for r in opened.runs] == [reply_text(ex.run) for ex in reversed(tap.exchanges())]
    assert tap.statusBar().currentMessage().startswith("Exported 2 exchanges to ")


# -- Run > Tap… in the main window ------------------------------------------------------------------------
def test_run_tap_menu_opens_the_dialog_then_the_window(qtbot, loop, settings, monkeypatch):
    from gui.main_window import MainWindow
    from gui.tap_window import TapDialog, TapWindow

    w = MainWindow([], settings=settings)
    qtbot.addWidget(w)
    assert w.act_tap.text() == "Ta&p…"

    def fake_exec(dlg):
        dlg.listen_edit.setText("127.0.0.1:0")
        dlg.upstreams_edit.setText("emulator")
        dlg.accept()
        return dlg.result()

    monkeypatch.setattr(TapDialog, "exec", fake_exec)
    in_loop(loop, w.act_tap.trigger)
    tw = w.tap_window
    assert isinstance(tw, TapWindow)
    run_until(loop, lambda: tw.serving and tw.base_url is not None)
    in_loop(loop, w.act_tap.trigger)              # while it runs, the same window is raised
    assert w.tap_window is tw
    loop.run_until_complete(w.aclose())           # closing the main window stops the tap
    assert not tw.serving
    close(tw, loop)


# -- File > Open of every recording kind -----------------------------------------------------------------------
# the window on an instant emulator: the fixtures of the conversation tests
from tests.gui.test_turns import emulator, window  # noqa: E402,F401  (fixtures)


def _sent(window, loop) -> list:
    window.prompt.prompt.setPlainText("What is the capital of France?")
    window.scenario.setCurrentText("thinking")
    window.prompt.thinking.setChecked(True)     # (the scenario thinks only when asked)
    assert window.send()
    run_until(loop, lambda: window.finished, timeout=30)
    return window.runs()


def _opened(window, loop, path) -> list[tuple[str, str]]:
    n = window.open_capture(path, speed=None)
    run_until(loop, lambda: window.finished, timeout=30)
    window.scheduler.flush()
    assert len(window.panes) == n
    return [(p.controller.run.format, p.text_view.answer_text(), p.controller.run.decoder.result())
            for p in window.panes]


def test_file_open_replays_a_har_a_cassette_and_an_sse_body(window, loop, tmp_path):
    from core.live.capture import export, har_document, sse_paths

    runs = _sent(window, loop)
    want = [(r.format, reply_text(r), r.decoder.result()) for r in runs]      # the text shown, and decode's
    assert all(text for _f, text, _r in want) and len(want) == 4
    assert all(any(b.kind == "thinking" for b in r.decoder.reply.ordered_blocks()) for r in runs)

    export(runs, tmp_path / "run.yaml")
    assert _opened(window, loop, tmp_path / "run.yaml") == want
    # a cassette keeps no prompt of StreamScope's: the one its requests carry is shown (it said "kept no prompt")
    assert window.prompt_area.captured.text.toPlainText() == "What is the capital of France?"
    assert window.prompt_area.captured.reuse_button.isEnabled()

    # a HAR as a browser writes it: StreamScope's own entries stripped of their extras, plus a page script
    doc = har_document(runs)
    for e in doc["log"]["entries"]:
        e.pop("_streamscope", None)
    doc["log"]["entries"].append({
        "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 1,
        "request": {"method": "GET", "url": "https://example.com/app.js", "httpVersion": "HTTP/1.1",
                    "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headers": [{"name": "content-type", "value": "text/javascript"}], "cookies": [],
                     "content": {"size": 9, "mimeType": "text/javascript", "text": "var x = 1"},
                     "redirectURL": "", "headersSize": -1, "bodySize": 9},
        "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}})
    har = tmp_path / "browser.har"
    har.write_text(json.dumps(doc), encoding="utf-8")
    assert _opened(window, loop, har) == want
    assert window.last_skipped and "example.com/app.js" in window.last_skipped[0].entry
    assert window.statusBar().currentMessage().startswith("Replayed: 4 done · skipped 1: entry ")
    assert "example.com/app.js: not an LLM exchange" in window.statusBar().currentMessage()

    export(runs, tmp_path / "run.sse")
    anthropic = next(p for p, r in zip(sse_paths(runs, tmp_path / "run.sse"), runs) if r.format == "anthropic")
    assert _opened(window, loop, anthropic) == [w for w in want if w[0] == "anthropic"]
    fmt_line = window.panes[0].format_label.text()
    assert fmt_line.startswith("anthropic · ") and "·  ·" not in fmt_line, fmt_line   # (a .sse names no model)
    assert window.recent_files()[0] == str(anthropic)
    assert next(a for a in window.recent_menu.actions() if a.text() == str(har)).isEnabled()


def test_file_open_dialog_lists_every_recording_kind(window, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    asked = {}

    def fake(parent, title, folder, filters):
        asked["filters"] = filters
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(fake))
    window.open_capture_dialog(None)
    first = asked["filters"].split(";;")[0]
    for pattern in ("*.jsonl", "*.har", "*.sse", "*.yaml", "*.yml"):
        assert pattern in first
