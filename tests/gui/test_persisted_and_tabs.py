"""The window's persisted settings (gui/persisted.py), the pane's lazily built tabs (gui/panetabs.py), and the
facts the window reads from the core: the emulator's scenario catalog and the export file types."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, Qt

from tests.gui.test_window import emulator, send, window  # noqa: F401  (fixtures)


# -- persisted settings ---------------------------------------------------------------------------------------
def test_settings_read_their_defaults_when_missing_or_unreadable(tmp_path):
    from gui.persisted import DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT, PersistedSettings

    fresh = PersistedSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.IniFormat))
    assert (fresh.read_timeout, fresh.connect_timeout) == (DEFAULT_READ_TIMEOUT, DEFAULT_CONNECT_TIMEOUT)
    assert (fresh.theme, fresh.font_size, fresh.recent_files, fresh.prompt_state) == ("light", 0, [], {})
    assert fresh.selected_providers is None and fresh.scenario is None and fresh.prompt_collapsed is False
    assert fresh.geometry is None and fresh.window_state is None and fresh.main_split is None

    qs = QSettings(str(tmp_path / "garbage.ini"), QSettings.IniFormat)
    for key, value in (("run/read_timeout", "soon"), ("run/connect_timeout", "-3"), ("view/font_size", "big"),
                       ("recent_files", "{not json"), ("prompt/state", "[1, 2]"), ("providers/selected", '"x"'),
                       ("window/prompt_collapsed", "maybe"), ("window/geometry", "not bytes")):
        qs.setValue(key, value)
    bad = PersistedSettings(qs)
    assert (bad.read_timeout, bad.connect_timeout, bad.font_size) == (DEFAULT_READ_TIMEOUT,
                                                                       DEFAULT_CONNECT_TIMEOUT, 0)
    assert bad.recent_files == [] and bad.prompt_state == {} and bad.selected_providers is None
    assert bad.prompt_collapsed is False and bad.geometry is None


def test_settings_round_trip_under_the_keys_earlier_versions_wrote(tmp_path):
    from gui.persisted import MAX_RECENT, PersistedSettings

    path = str(tmp_path / "s.ini")
    s = PersistedSettings(QSettings(path, QSettings.IniFormat))
    s.read_timeout, s.connect_timeout, s.theme, s.font_size = 7.5, 2.0, "dark", 14
    s.prompt_state = {"user": "hi", "max_tokens": 10}
    s.selected_providers = ["a", "b"]
    s.scenario = "stall"
    s.prompt_collapsed = True
    s.geometry = QByteArray(b"geo")
    for i in range(MAX_RECENT + 2):
        s.add_recent(f"/f{i}.jsonl")
    s.add_recent("/f3.jsonl")                      # again: moves to the front, listed once
    s.sync()
    raw = QSettings(path, QSettings.IniFormat)
    assert float(raw.value("run/read_timeout")) == 7.5 and float(raw.value("run/connect_timeout")) == 2.0
    assert raw.value("view/theme") == "dark" and int(raw.value("view/font_size")) == 14
    assert raw.value("providers/scenario") == "stall"
    again = PersistedSettings(raw)
    assert (again.read_timeout, again.connect_timeout, again.theme, again.font_size) == (7.5, 2.0, "dark", 14)
    assert again.prompt_state == {"user": "hi", "max_tokens": 10} and again.selected_providers == ["a", "b"]
    assert again.prompt_collapsed is True
    assert bytes(again.geometry) == b"geo"
    recent = again.recent_files
    assert len(recent) == MAX_RECENT and recent[0] == "/f3.jsonl" and recent.count("/f3.jsonl") == 1
    assert recent[1] == f"/f{MAX_RECENT + 1}.jsonl"


# -- facts the window reads from the core -----------------------------------------------------------------------
def test_the_scenario_picker_is_the_emulators_catalog_with_its_descriptions(window):  # noqa: F811
    from core.servers.emulator.scenarios import SCENARIOS

    combo = window.scenario
    assert [combo.itemText(i) for i in range(combo.count())] == list(SCENARIOS)
    assert all(combo.itemData(i, Qt.ToolTipRole) == SCENARIOS[combo.itemText(i)] for i in range(combo.count()))


def test_the_export_dialog_offers_the_cores_export_types():
    from core.live.capture import EXPORT_TYPES
    from gui.main_window import EXPORT_FILTERS, export_path

    assert [ext for _f, ext in EXPORT_FILTERS] == [t.extension for t in EXPORT_TYPES]
    md = next(f for f, ext in EXPORT_FILTERS if ext == ".md")
    assert export_path("/x/report", md) == "/x/report.md"
    assert export_path("/x/report.HAR", md) == "/x/report.HAR"          # a known extension is kept
    assert export_path("/x/notes.markdown", "") == "/x/notes.markdown"
    assert export_path("/x/capture", "") == "/x/capture.jsonl"


# -- tabs built when first used -----------------------------------------------------------------------------------
def test_tabs_are_built_when_first_shown_or_used(window, loop):  # noqa: F811
    from gui.panetabs import BLOCKS, DIAGNOSTICS, RAW, REQUEST, TAB_CLASSES, USAGE, RawTab

    send(window, loop, "Hello", scenario="text")
    pane = window.panes[0]

    def built(index) -> bool:
        return pane.tabs.widget(index).findChild(TAB_CLASSES[index]) is not None

    assert not any(built(i) for i in (BLOCKS, RAW, USAGE, DIAGNOSTICS, REQUEST))
    pane.show_frame(0)                              # the timeline's or a finding's link builds Raw alone
    assert built(RAW) and pane.tabs.currentIndex() == RAW
    assert not any(built(i) for i in (BLOCKS, USAGE, DIAGNOSTICS, REQUEST))
    raw = pane.raw_tab
    assert isinstance(raw, RawTab) and pane.tab(RAW) is raw          # built once
    assert [r.row() for r in raw.table.selectionModel().selectedRows()] == [0]
    assert raw.detail.toPlainText().startswith("frame 0 · event ")
    pane.tabs.setCurrentIndex(USAGE)                # showing a tab builds it
    assert built(USAGE)
    # a block selected in Blocks selects its frames in Raw
    pane.blocks_tab.table.selectRow(0)
    block = pane.controller.blocks.block(0)
    frames_model, proxy = pane.controller.frames, pane.controller.frames_proxy
    selected = {frames_model.item(proxy.mapToSource(i).row()).n for i in raw.table.selectionModel().selectedRows()}
    assert selected == set(block.frames)
