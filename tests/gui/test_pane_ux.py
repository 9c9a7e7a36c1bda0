"""What the user sees: the font size everywhere, the exact request body, error and stall states, tool calls in
the Text and Blocks tabs, notices on streams that finished with findings, readable thinking."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFontInfo, QPalette
from PySide6.QtWidgets import QApplication

from tests.gui.conftest import run_until
from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)


# -- font size ---------------------------------------------------------------------------------------------------
def _font_widgets(window) -> dict:
    pane = window.panes[0]
    for i in range(6):
        pane.tab(i)
    return {
        "prompt": window.prompt.prompt, "tools editor": window.prompt.tools, "provider list": window.provider_list,
        "menu bar": window.menuBar(), "timeline": window.timeline, "pane name": pane.name_label,
        "badge": pane.badge, "metrics": pane.metrics_label, "answer": pane.text_view.answer,
        "thinking": pane.text_view.thinking, "blocks table": pane.blocks_tab.table,
        "block detail": pane.blocks_tab.detail,
        "raw table": pane.raw_tab.table, "raw detail": pane.raw_tab.detail, "usage table": pane.usage_tab.table,
        "diagnostics": pane.diagnostics_tab.table, "request": pane.request_tab.text, "tab bar": pane.tabs.tabBar(),
    }


MONO = ("tools editor", "metrics", "block detail", "raw detail", "request")


@pytest.mark.slow
def test_font_size_applies_to_every_widget_monospace_included_and_persists(window, loop, qtbot, settings,
                                                                           emulator):
    from core.live.config import demo_providers
    from gui.main_window import MainWindow

    send(window, loop, "Think first", scenario="thinking")
    default = window.font_size
    widgets = _font_widgets(window)
    before = {name: w.font().pointSize() for name, w in widgets.items()}
    assert set(before.values()) == {default}, before
    try:
        window.set_font_size(default + 5)
        QApplication.processEvents()
        after = {name: w.font().pointSize() for name, w in widgets.items()}
        assert after == {name: default + 5 for name in widgets}, after
        for name in MONO:      # still monospace, at the new size
            assert QFontInfo(widgets[name].font()).fixedPitch(), name
        assert not QFontInfo(widgets["answer"].font()).fixedPitch()
        assert widgets["pane name"].font().bold() and widgets["thinking"].font().italic()
        # table rows and the timeline grow with the font
        fm_h = widgets["raw table"].fontMetrics().height()
        assert widgets["raw table"].verticalHeader().defaultSectionSize() >= fm_h
        assert window.timeline.LEGEND_H >= window.timeline.fontMetrics().height()
        assert int(settings.value("view/font_size")) == default + 5
        # panes made after the change, and the next window, use it too
        send(window, loop, "Hello", scenario="text")
        pane = window.panes[0]
        pane.tab(5)
        assert pane.request_tab.text.font().pointSize() == default + 5
        assert QFontInfo(pane.request_tab.text.font()).fixedPitch()
        w2 = MainWindow([], settings=settings, demo_providers=demo_providers(emulator))
        qtbot.addWidget(w2)
        assert w2.font_size == default + 5 and w2.prompt.tools.font().pointSize() == default + 5
        window.set_font_size(0)
        QApplication.processEvents()
        widgets = _font_widgets(window)
        assert {name: w.font().pointSize() for name, w in widgets.items()} == before
        assert int(settings.value("view/font_size")) == 0
    finally:
        window.set_font_size(0)


# -- the Request tab: the exact bytes ---------------------------------------------------------------------------
def _sse_reply() -> bytes:
    def chunk(delta, finish=None):
        return ("data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                + "\n\n").encode()
    return chunk({"role": "assistant", "content": "Bonjour"}) + chunk({}, "stop") + b"data: [DONE]\n\n"


def test_request_tab_shows_the_body_exactly_as_sent(qtbot, loop, settings, monkeypatch):
    """What reached the server, byte for byte, is what the Request tab shows (the key masked)."""
    import httpx

    from core.live.config import ProviderConfig
    from gui.main_window import MainWindow
    from gui.panetabs import REQUEST

    received: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        received.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=_sse_reply())

    key = "sk-exact-bytes-test-0123456789"
    monkeypatch.setenv("STREAMSCOPE_EXACT_KEY", key)
    provider = ProviderConfig("mock", "openai-chat", "http://127.0.0.1:9/v1", "gpt-test", "STREAMSCOPE_EXACT_KEY")
    w = MainWindow([provider], settings=settings, read_timeout=5.0,
                   client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    qtbot.addWidget(w)
    try:
        w.provider_model.set_checked(["mock"])
        w.prompt.prompt.setPlainText("Größe von Tōkyō? \"quoted\"\ttab")
        w.prompt.temperature.setValue(0.7)
        w.prompt.tools.setPlainText('[{"name": "get_weather", "parameters": {"type": "object", '
                                    '"properties": {"city": {"type": "string"}}}}]')
        assert w.send()
        run_until(loop, lambda: w.finished)
        w.scheduler.flush()
        assert len(received) == 1
        sent = received[0].content
        pane = w.panes[0]
        pane.tabs.setCurrentIndex(REQUEST)
        shown = pane.request_tab.text.toPlainText()
        assert sent.decode("utf-8") in shown.split("\n")       # one line, byte for byte
        assert f"── body: {len(sent):,} bytes, exactly as sent" in shown
        assert key not in shown and received[0].headers["authorization"] == f"Bearer {key}"
        assert "Authorization: [REDACTED]" in shown
        assert "HTTP/1.1 200 OK" in shown
        # the pretty view: the same JSON, indented
        pane.request_tab.pretty_check.setChecked(True)
        pretty = pane.request_tab.text.toPlainText()
        assert json.dumps(json.loads(sent), indent=2, ensure_ascii=False) in pretty
        assert sent.decode("utf-8") not in pretty.split("\n")
        pane.request_tab.pretty_check.setChecked(False)
        assert pane.request_tab.text.toPlainText() == shown
    finally:
        loop.run_until_complete(w.aclose())


# -- error states -----------------------------------------------------------------------------------------------
def test_http_error_shows_the_error_body_and_says_where_it_is(window, loop):
    from gui.panetabs import REQUEST

    send(window, loop, "Hello", scenario="http-429")
    for pane in window.panes:
        run = pane.controller.run
        banner = pane.error_label.text()
        assert "HTTP 429" in banner and "error body is in the Request tab" in banner
        assert "wait 1 s (its retry-after header)" in banner       # the emulator sends retry-after: 1
        assert "What arrived before" not in banner            # nothing but the error body arrived
        assert not pane.text_view.answer_text()
        assert "HTTP 429" in pane.text_view.answer.placeholderText()
        pane.tabs.setCurrentIndex(REQUEST)
        text = pane.request_tab.text.toPlainText()
        assert "── response body (" in text
        assert run.body.decode("utf-8") in text               # the provider's own error body, as received
        assert not pane.notice_label.isVisible()


def test_mid_stream_error_keeps_the_partial_reply_and_says_so(window, loop):
    send(window, loop, "Hello there", scenario="mid-stream-error")
    for pane in window.panes:
        banner = pane.error_label.text()
        assert banner.startswith("Error inside the stream at frame")
        assert "What arrived before is kept here" in banner
        assert pane.text_view.answer_text()
        assert "#fde8e8" in pane.error_label.styleSheet()    # the red banner
        note = pane.text_view.end_note
        frame = pane.controller.run.decoder.reply.error.frame
        assert note.isVisible() and note.text() == ("⟂ The reply stops here: the provider sent an error inside "
                                                    f"the stream at frame {frame}.")
        assert "⟂" not in pane.text_view.answer_text()       # the note is not part of the reply's text


def test_a_dropped_stream_is_marked_where_its_text_stops(window, loop):
    send(window, loop, "Hello there", scenario="drop")
    for pane in window.panes:
        reply = pane.controller.run.decoder.reply
        last = max(b.frames[-1] for b in reply.blocks.values())
        assert pane.controller.status == "error"
        assert pane.text_view.end_note.text() == (f"⟂ The reply stops here after frame {last}: the exchange "
                                                  "failed (see the message below).")
        assert pane.text_view.end_note.textFormat() == Qt.PlainText
        # ... and the message is below it (the banners are under the tabs; the note said "above")
        note, banner = pane.text_view.end_note, pane.error_label
        assert banner.isVisibleTo(pane) and banner.mapTo(pane, QPoint(0, 0)).y() > note.mapTo(pane, QPoint(0, 0)).y()
    from gui.panetext import empty_reply_text
    assert not any("above" in empty_reply_text(p.controller.run) for p in window.panes)


@pytest.mark.slow
def test_stall_shows_quiet_time_then_ends_stalled(window, loop):
    window.set_timeouts(read=2.0, persist=False)
    send(window, loop, "Hello there", scenario="stall", wait=False)
    assert {p.read_timeout for p in window.panes} == {2.0}
    run_until(loop, lambda: all(p.quiet_label.isVisible() for p in window.panes), timeout=10,
              why=lambda: [(p.controller.status, p.quiet_label.text()) for p in window.panes])
    for pane in window.panes:
        text = pane.quiet_label.text()
        assert text.startswith("quiet for ") and "stalled at 2 s without a byte" in text, text
        assert pane.badge.text() == "streaming"
    run_until(loop, lambda: window.finished, timeout=10)
    window.scheduler.flush()
    for pane in window.panes:
        assert pane.controller.status == "stalled" and pane.badge.text() == "stalled"
        assert not pane.quiet_label.isVisible()
        banner = pane.error_label.text()
        assert "stalled" in banner and "no bytes for 2 s" in banner and "Run → Timeouts…" in banner
        assert "#ffedd5" in pane.error_label.styleSheet()    # amber, not the error red
        assert pane.text_view.answer_text()
        assert pane.text_view.end_note.text().startswith("⟂ The reply stops here after frame ")
        assert "nothing more arrived before the read timeout" in pane.text_view.end_note.text()


def test_quiet_text_tells_keepalives_from_silence():
    """The quiet line on a live run: keepalives only, no bytes at all, or no headers yet."""
    from core.live.config import ProviderConfig
    from core.live.recorder import ProviderRun
    from gui.controller import PaneController, RepaintScheduler
    from gui.pane import PaneWidget
    from gui.panetext import quiet_text

    run = ProviderRun(ProviderConfig("p", "anthropic", "http://127.0.0.1:9", "m", ""))
    run._begin(0.0)
    c = PaneController(run, RepaintScheduler())
    pane = PaneWidget(c)
    pane.read_timeout = 60.0

    def quiet():
        return quiet_text(pane.controller.run, pane.read_timeout)

    origin = run._clock_origin
    run._clock_origin = origin - 5_000_000_000                     # 5 s since sending, no headers
    assert quiet() == "waiting for the response headers for 5.0 s; stalled at 60 s without a byte"
    run._on_headers(100_000_000, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")])
    run._on_chunk(200_000_000, b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
                               b'"delta":{"type":"text_delta","text":"Hi"}}\n\n')
    run._on_chunk(4_900_000_000, b'event: ping\ndata: {"type": "ping"}\n\n')   # a keepalive 0.1 s ago
    assert quiet().startswith("quiet for 4.8 s: keepalives only (1 so far")
    run._clock_origin = origin - 9_000_000_000                     # then 4.1 s of silence
    assert quiet() == "quiet for 8.8 s, not a byte for 4.1 s; stalled at 60 s without a byte"
    run._finish(9_000_000_000, None)
    assert quiet() is None


# -- tool calls, finish reasons, notices ------------------------------------------------------------------------
def test_tool_calls_are_readable_in_the_text_and_blocks_tabs(window, loop):
    from gui.panetabs import BLOCKS

    send(window, loop, "Weather in Paris and London?", scenario="parallel-tools")
    for pane in window.panes:
        run = pane.controller.run
        calls = [b for b in run.decoder.reply.ordered_blocks() if b.kind == "tool_call"]
        assert len(calls) == 2
        text = pane.text_view.answer_text()
        for b in calls:
            assert f"⟦tool call: {b.name}" in text and b.arguments in text
        assert "finish tool_calls" in pane.format_label.text()
        # Blocks, nothing selected: every call with its arguments, pretty-printed
        pane.tabs.setCurrentIndex(BLOCKS)
        detail = pane.blocks_tab.detail.toPlainText()
        for b in calls:
            assert json.dumps(json.loads(b.arguments), indent=2) in detail
        # the name and the JSON verdict come right after the type, so a narrow pane shows them
        hh = pane.blocks_tab.table.horizontalHeader()
        assert [hh.logicalIndex(v) for v in range(5)] == [0, 1, 2, 3, 7]
        row = next(r for r in range(pane.controller.blocks.rowCount())
                   if pane.controller.blocks.block(r).kind == "tool_call")
        assert pane.controller.blocks.index(row, 7).data() == "✓ valid"


@pytest.mark.parametrize("scenario,code", [("malformed-json", "data-not-json"),
                                           ("no-terminator", "missing-terminator")])
@pytest.mark.slow
def test_done_with_findings_gets_a_notice_not_an_error(window, loop, scenario, code):
    send(window, loop, "Hello there", scenario=scenario)
    for pane in window.panes:
        assert pane.controller.status == "done" and pane.badge.text() == "done"
        assert not pane.error_label.isVisible()
        assert pane.notice_label.isVisible()
        assert code in pane.notice_label.text() and "Diag tab" in pane.notice_label.text()
        pane.tab(4)
        assert not pane.diagnostics_tab.table.wordWrap()   # one line per finding, elided (issue 12)
        missing = scenario == "no-terminator"
        assert pane.text_view.end_note.isVisible() == missing
        if missing:
            assert "without its end marker: the reply may be incomplete" in pane.text_view.end_note.text()


def test_clean_streams_get_no_notice(window, loop):
    send(window, loop, "Hello", scenario="text")
    for pane in window.panes:
        assert pane.controller.run.decoder.reply.diagnostics or pane.controller.name == "demo-openai-responses"
        assert not pane.notice_label.isVisible() and not pane.error_label.isVisible()
        assert "finish stop" in pane.format_label.text()
        assert not pane.text_view.end_note.isVisible()


# -- readable thinking ------------------------------------------------------------------------------------------
def _contrast(a, b) -> float:
    def lum(c):
        def ch(v):
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.slow
def test_thinking_is_dimmed_but_readable_in_both_themes(window, loop):
    send(window, loop, "Think", scenario="thinking")
    view = window.panes[0].text_view
    try:
        for theme in ("light", "dark"):
            window.set_theme(theme)
            QApplication.processEvents()
            pal = view.thinking.palette()
            thinking, base = pal.color(QPalette.Text), pal.color(QPalette.Base)
            answer = view.answer.palette().color(QPalette.Text)
            assert base == QApplication.palette().color(QPalette.Base), theme
            assert 4.5 <= _contrast(thinking, base) < _contrast(answer, base), theme
    finally:
        window.set_theme("light")


def test_error_and_ok_messages_are_readable_in_both_themes(qapp):
    """A message's verdict colour follows the theme (the light theme's red was 2.1:1 on the dark window)."""
    from gui.theme import apply_theme, set_verdict, theme_name
    from gui.widgets import plain_label

    label = plain_label("✗ not JSON")
    before = theme_name(qapp)
    try:
        for theme in ("light", "dark"):
            apply_theme(qapp, theme)
            shades = {}
            for verdict in ("error", "warning", "ok"):
                set_verdict(label, verdict)
                label.ensurePolished()
                pal = label.palette()
                shades[verdict] = pal.color(QPalette.WindowText)
                assert _contrast(shades[verdict], pal.color(QPalette.Window)) >= 4.5, (theme, verdict)
            assert shades["error"].red() > shades["error"].green() and shades["ok"].green() > shades["ok"].red()
            set_verdict(label, None)
            assert label.palette().color(QPalette.WindowText) == qapp.palette().color(QPalette.WindowText)
    finally:
        apply_theme(qapp, before)


def test_a_stream_past_the_body_bound_says_what_happened_and_what_to_do():
    from core.live.config import ProviderConfig
    from core.live.errors import ErrorType, error_dict
    from core.live.recorder import rebuild_run
    from gui.panetext import error_report

    body = b'data: {"choices":[{"index":0,"delta":{"content":"ab"}}]}\n\n'
    run = rebuild_run(ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m", ""),
                      headers=(0, 200, "HTTP/1.1", "OK", [("content-type", "text/event-stream")]),
                      chunks=[(1, body)], end_ns=2,
                      transport_error=error_dict(ErrorType.BODY_TOO_LARGE, "the stream passed 256 MiB"))
    short, _full = error_report(run, run.reply)
    head, message, todo = short.split("\n")
    assert head == "The stream passed StreamScope's bound: it stopped reading · HTTP 200"
    assert message == "the stream passed 256 MiB"
    assert todo.startswith("What to do: lower the max tokens") and "What arrived before is kept here" in todo


@pytest.mark.parametrize("status, etype, says", [
    (401, "http_error", "the API key your application sends"),
    (429, "http_error", "your application should wait 7 s (the retry-after header) before it retries"),
    (503, "http_error", "your application got the same status"),
    (None, "connect_failed", "check the upstream URL (Run → Tap…)"),
    (None, "stalled", "your application's own timeout decides"),
])
def test_a_tapped_exchanges_advice_is_for_the_application_that_sent_it(status, etype, says):
    """The user's own application sent a tap's request: "send again", "send to fewer providers", the key's
    environment variable and the window's timeouts are not theirs to use there."""
    from core.live.config import ProviderConfig
    from core.live.errors import error_dict
    from core.live.exchange import Exchange
    from core.live.recorder import rebuild_run
    from gui.panetext import error_report

    ex = Exchange("tap#1", "POST", "http://127.0.0.1:9/v1/chat/completions", [("content-type", "application/json")],
                  b'{"model": "m", "stream": true}')
    assert ex.run.observed
    headers = None if status is None else (0, status, "HTTP/1.1", "", [("content-type", "application/json"),
                                                                        ("retry-after", "7")])
    for observed in (True, False):
        run = rebuild_run(ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m", ""), headers=headers,
                          chunks=[(1, b'{"error": {"message": "no"}}')] if status else [], end_ns=2,
                          transport_error=error_dict(etype, "it failed"))
        run.observed = observed
        todo = error_report(run, run.reply)[0].split("\n")[-1]
        if observed:
            assert says in todo, todo
            assert not any(w in todo for w in ("send again", "fewer providers", "environment variable",
                                               "Timeouts", "Settings")), todo
        else:
            assert says not in todo


def test_the_listed_findings_stand_for_every_one_counted_in_the_views_totals():
    """The pane's History heading and the tap's line counted the listed findings: 101 errors for 3,000."""
    from core.live.config import ProviderConfig
    from core.live.recorder import ProviderRun
    from core.live.request import HttpRequest
    from core.wire.history import check_request, finding_totals
    from gui.panetext import history_lines

    n = 3000
    body = {"messages": [{"role": "user", "content": "q"}]
            + [{"role": "tool", "tool_call_id": f"r{k}", "content": ""} for k in range(n)]}
    assert finding_totals(check_request("openai-chat", body)) == (n, n)
    run = ProviderRun(ProviderConfig("p", "openai-chat", "http://127.0.0.1:9/v1", "m"),
                      HttpRequest("POST", "http://127.0.0.1:9/v1/chat/completions", {}, body))
    assert history_lines(run)[0].startswith(f"History check: {n} errors, {n} warnings")
