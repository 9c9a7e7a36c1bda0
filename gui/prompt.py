"""The prompt area: user prompt, a collapsible system prompt, temperature, max tokens, thinking, a collapsible
sampling row (stop sequences, top_p, seed, n), and a tools editor (JSON, validated as you type by
`core.live.tools.validate_tools`, as `run --tools` is; with presets). It produces a
`core.live.request.PromptSpec`."""
from __future__ import annotations

import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QLineEdit,
                               QPlainTextEdit, QSizePolicy, QSpinBox, QToolButton, QVBoxLayout, QWidget)

from core.live.request import MAX_STOP, PromptSpec, check_sampling, parse_stop_text
from core.live.tool_mocks import TOOL_PRESETS
from core.live.summary import plural
from core.live.tools import validate_tools

from gui.theme import mono_font, set_verdict

SAMPLING_TIP = ("Stop sequences, top_p, seed and n (each API takes what it can; the Request tab notes what was "
                "left out)")


class PromptPanel(QWidget):
    """The prompt and its settings.

    Signals:
        sendRequested(): Ctrl+Enter in the prompt (the window also has the shortcut on its Send action).
        toolsValidityChanged(bool): the tools editor's content became valid / invalid.
        sectionToggled(str, int): System, Sampling or Tools was opened (the height it wants, > 0) or closed (the
            height it had, < 0): the window grows or shrinks the prompt area by that much
            (`MainWindow._fit_prompt_section`), as a splitter does not do it by itself.
    """

    sendRequested = Signal()
    toolsValidityChanged = Signal(bool)
    sectionToggled = Signal(str, int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)

        self.prompt = QPlainTextEdit(self)
        self.prompt.setObjectName("prompt")
        self.prompt.setPlaceholderText("Type a prompt, then Ctrl+Enter to send it to every checked provider "
                                       "(Esc stops them all).")
        self.prompt.setTabChangesFocus(True)
        lay.addWidget(self.prompt, 1)

        # options row
        row = QHBoxLayout()
        row.setSpacing(8)
        self.system_toggle = QToolButton(self)
        self.system_toggle.setText("System")   # (short: this row sets the window's minimum width)
        self.system_toggle.setToolTip("The system prompt (sent in each format's own way)")
        self.system_toggle.setCheckable(True)
        self.system_toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.system_toggle.setArrowType(Qt.RightArrow)
        self.system_toggle.setAutoRaise(True)
        self.tools_toggle = QToolButton(self)
        self.tools_toggle.setText("Tools")
        self.tools_toggle.setCheckable(True)
        self.tools_toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.tools_toggle.setArrowType(Qt.RightArrow)
        self.tools_toggle.setAutoRaise(True)
        self.sampling_toggle = QToolButton(self)
        self.sampling_toggle.setText("Sampling")
        self.sampling_toggle.setCheckable(True)
        self.sampling_toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.sampling_toggle.setArrowType(Qt.RightArrow)
        self.sampling_toggle.setAutoRaise(True)
        self.sampling_toggle.setToolTip(SAMPLING_TIP)
        row.addWidget(self.system_toggle)
        row.addWidget(self.sampling_toggle)
        row.addWidget(self.tools_toggle)
        row.addStretch(1)
        row.addWidget(QLabel("Temperature", self))
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setRange(-0.1, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(1)
        self.temperature.setSpecialValueText("default")
        self.temperature.setValue(-0.1)
        self.temperature.setToolTip("Sampling temperature; \"default\" sends none (the provider's default)")
        row.addWidget(self.temperature)
        row.addWidget(QLabel("Max tokens", self))
        self.max_tokens = QSpinBox(self)
        self.max_tokens.setRange(1, 1_000_000)
        self.max_tokens.setValue(1024)
        self.max_tokens.setGroupSeparatorShown(True)
        row.addWidget(self.max_tokens)
        # (short labels: this row sets the window's minimum width)
        choices_label = QLabel("n", self)
        self.choices = QSpinBox(self)
        self.choices.setRange(1, 8)
        tip = ("Choices: several replies to the one prompt (OpenAI Chat Completions' n); each pane shows them one "
               "after another, by choice. Other APIs answer with one.")
        self.choices.setToolTip(tip)
        choices_label.setToolTip(tip)
        choices_label.setBuddy(self.choices)
        self.choices.valueChanged.connect(self._update_sampling_title)
        self.thinking = QCheckBox("Thinking", self)
        self.thinking.setToolTip("Ask for the model's reasoning (extended thinking / reasoning effort / "
                                 "thinking budget, per format)")
        row.addWidget(self.thinking)
        self.thinking_budget = QSpinBox(self)
        self.thinking_budget.setRange(128, 200_000)
        self.thinking_budget.setValue(1024)
        self.thinking_budget.setSingleStep(512)
        self.thinking_budget.setToolTip("Thinking budget, in tokens")
        self.thinking_budget.setEnabled(False)
        self.thinking.toggled.connect(self.thinking_budget.setEnabled)
        row.addWidget(self.thinking_budget)
        lay.addLayout(row)

        # sampling options (collapsible: the options row above sets the window's minimum width)
        self.sampling_box = QWidget(self)
        srow = QHBoxLayout(self.sampling_box)
        srow.setContentsMargins(0, 0, 0, 0)
        srow.setSpacing(8)
        stop_label = QLabel("Stop", self.sampling_box)
        self.stop = QLineEdit(self.sampling_box)
        self.stop.setObjectName("stop")
        self.stop.setPlaceholderText(r"stop sequences, separated by |  (\n: a line break, \| a bar)")
        stop_tip = (f"Up to {MAX_STOP} stop sequences: the reply ends before any of them. Sent as stop (OpenAI "
                    "Chat), stop_sequences (Anthropic), generationConfig.stopSequences (Gemini); the Responses API "
                    "takes none.")
        self.stop.setToolTip(stop_tip)
        stop_label.setToolTip(stop_tip)
        stop_label.setBuddy(self.stop)
        self.stop.textChanged.connect(self._update_sampling_title)
        top_p_label = QLabel("top_p", self.sampling_box)
        self.top_p = QDoubleSpinBox(self.sampling_box)
        self.top_p.setObjectName("top_p")
        self.top_p.setRange(-0.05, 1.0)
        self.top_p.setSingleStep(0.05)
        self.top_p.setDecimals(2)
        self.top_p.setSpecialValueText("default")
        self.top_p.setValue(-0.05)
        top_p_tip = "Nucleus sampling, 0 to 1; \"default\" sends none (top_p / generationConfig.topP)"
        self.top_p.setToolTip(top_p_tip)
        top_p_label.setToolTip(top_p_tip)
        top_p_label.setBuddy(self.top_p)
        self.top_p.valueChanged.connect(self._update_sampling_title)
        seed_label = QLabel("Seed", self.sampling_box)
        self.seed = QSpinBox(self.sampling_box)
        self.seed.setObjectName("seed")
        self.seed.setRange(-1, 2_147_483_647)
        self.seed.setSpecialValueText("none")
        self.seed.setValue(-1)
        seed_tip = ("A sampling seed for repeatable replies, where the API takes one (OpenAI Chat seed, Gemini "
                    "generationConfig.seed); \"none\" sends none")
        self.seed.setToolTip(seed_tip)
        seed_label.setToolTip(seed_tip)
        seed_label.setBuddy(self.seed)
        self.seed.valueChanged.connect(self._update_sampling_title)
        srow.addWidget(stop_label)
        srow.addWidget(self.stop, 1)
        srow.addWidget(top_p_label)
        srow.addWidget(self.top_p)
        srow.addWidget(seed_label)
        srow.addWidget(self.seed)
        srow.addWidget(choices_label)   # (n lives here, with the other sampling options: the row above is full)
        srow.addWidget(self.choices)
        self.sampling_box.hide()
        lay.addWidget(self.sampling_box)
        self.sampling_toggle.toggled.connect(self._toggle_sampling)

        # system prompt (collapsible)
        self.system = QPlainTextEdit(self)
        self.system.setObjectName("system")
        self.system.setPlaceholderText("System prompt (sent in each format's own way)")
        self.system.setTabChangesFocus(True)
        self.system.setMaximumHeight(80)
        self.system.hide()
        lay.addWidget(self.system)
        self.system_toggle.toggled.connect(self._toggle_system)

        # tools editor (collapsible)
        self.tools_box = QWidget(self)
        tl = QVBoxLayout(self.tools_box)
        tl.setContentsMargins(0, 0, 0, 0)
        trow = QHBoxLayout()
        self.preset = QComboBox(self.tools_box)
        self.preset.addItem("insert preset…")
        for name in TOOL_PRESETS:
            self.preset.addItem(name)
        self.preset.activated.connect(self._apply_preset)
        self.tool_choice = QComboBox(self.tools_box)
        self.tool_choice.setEditable(True)
        self.tool_choice.addItems(["(default)", "auto", "none", "required"])
        self.tool_choice.setToolTip("tool_choice: the provider's default, auto, none, required, or a tool's name")
        self.tools_status = QLabel(self.tools_box)
        self.tools_status.setTextFormat(Qt.PlainText)
        trow.addWidget(QLabel("Tools (JSON list of {name, description, parameters: JSON Schema})",
                              self.tools_box))
        trow.addStretch(1)
        trow.addWidget(QLabel("tool choice", self.tools_box))
        trow.addWidget(self.tool_choice)
        trow.addWidget(self.preset)
        tl.addLayout(trow)
        self.tools = QPlainTextEdit(self.tools_box)
        self.tools.setObjectName("tools")
        self.tools.setPlaceholderText('[{"name": "get_weather", "description": "...", "parameters": '
                                      '{"type": "object", "properties": {...}}}]')
        self.tools.setFont(mono_font())   # family only: the size follows View > font size
        self.tools.setMinimumHeight(90)
        tl.addWidget(self.tools)
        tl.addWidget(self.tools_status)
        self.tools_box.hide()
        lay.addWidget(self.tools_box)
        self.tools_toggle.toggled.connect(self._toggle_tools)
        self.tools.textChanged.connect(self._validate)
        self._valid = True
        self._validate()
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)

    # -- collapsibles ----------------------------------------------------------------------------------------
    def sections(self) -> dict[str, QWidget]:
        """The collapsible sections by name."""
        return {"system": self.system, "sampling": self.sampling_box, "tools": self.tools_box}

    def section_height(self, name: str) -> int:
        """The height a section wants when open, the layout's spacing above it included: the system prompt its
        80 px (about four lines), the sampling row its one line, the tools editor its label row, an editor of
        at least 90 px and the verdict line under it."""
        w = self.sections()[name]
        hint = w.minimumSizeHint().height() if name == "tools" else w.sizeHint().height()
        height = max(w.minimumSizeHint().height(), min(hint, w.maximumHeight()))
        return height + self.layout().spacing()

    def _set_section(self, name: str, on: bool) -> None:
        w = self.sections()[name]
        if on == w.isVisibleTo(self):
            return
        delta = self.section_height(name) if on else -(w.height() + self.layout().spacing())
        w.setVisible(on)
        self.sectionToggled.emit(name, delta)

    def _toggle_system(self, on: bool) -> None:
        self._set_section("system", on)
        self.system_toggle.setArrowType(Qt.DownArrow if on else Qt.RightArrow)

    def _toggle_sampling(self, on: bool) -> None:
        self._set_section("sampling", on)
        self.sampling_toggle.setArrowType(Qt.DownArrow if on else Qt.RightArrow)

    def _update_sampling_title(self, *_a) -> None:
        """"Sampling (3)": how many options are set shows while the row is folded (its tooltip says which); the
        title stays short, as the options row sets the window's minimum width."""
        stop = parse_stop_text(self.stop.text())
        what = ([plural(len(stop), "stop sequence")] if stop else []) + (
            [f"top_p {self.top_p.value():g}"] if self.top_p.value() >= 0 else []) + (
            [f"seed {self.seed.value()}"] if self.seed.value() >= 0 else []) + (
            [f"n {self.choices.value()}"] if self.choices.value() > 1 else [])
        self.sampling_toggle.setText("Sampling" + (f" ({len(what)})" if what else ""))
        self.sampling_toggle.setToolTip(SAMPLING_TIP + ("\nSet: " + ", ".join(what) if what else ""))

    def _toggle_tools(self, on: bool) -> None:
        self._set_section("tools", on)
        self.tools_toggle.setArrowType(Qt.DownArrow if on else Qt.RightArrow)

    def _apply_preset(self, i: int) -> None:
        if i <= 0:
            return
        name = self.preset.itemText(i)
        self.tools.setPlainText(json.dumps(TOOL_PRESETS[name], indent=2))
        self.preset.setCurrentIndex(0)

    def _validate(self) -> None:
        tools, msg = validate_tools(self.tools.toPlainText())
        valid = tools is not None
        self.tools_status.setText(("✓ " if valid else "✗ ") + msg)
        set_verdict(self.tools_status, "ok" if valid else "error")
        n = len(tools) if tools else 0
        self.tools_toggle.setText(f"Tools ({n})" if valid else "Tools (invalid)")
        if valid != self._valid:
            self._valid = valid
            self.toolsValidityChanged.emit(valid)

    # -- values ----------------------------------------------------------------------------------------------
    @property
    def tools_valid(self) -> bool:
        return self._valid

    def tools_message(self) -> str:
        return validate_tools(self.tools.toPlainText())[1]

    def spec(self) -> PromptSpec:
        """The prompt as the core's `PromptSpec` (raises ValueError when the tools do not validate)."""
        tools, msg = validate_tools(self.tools.toPlainText())
        if tools is None:
            raise ValueError(f"Tools: {msg}")
        t = self.temperature.value()
        choice = self.tool_choice.currentText().strip()
        top_p = self.top_p.value()
        spec = PromptSpec(user=self.prompt.toPlainText(), system=self.system.toPlainText(),
                          temperature=None if t < 0 else round(t, 2), max_tokens=self.max_tokens.value(),
                          tools=tuple(tools), tool_choice=None if choice in ("", "(default)") or not tools else choice,
                          thinking=self.thinking.isChecked(), thinking_budget=self.thinking_budget.value(),
                          choices=self.choices.value(), stop=parse_stop_text(self.stop.text()),
                          top_p=None if top_p < 0 else round(top_p, 2),
                          seed=None if self.seed.value() < 0 else self.seed.value())
        try:
            check_sampling(spec)
        except ValueError as exc:
            raise ValueError(f"Sampling: {exc}") from None
        return spec

    def state(self) -> dict:
        """What persists between sessions."""
        return {"user": self.prompt.toPlainText(), "system": self.system.toPlainText(),
                "temperature": self.temperature.value(), "max_tokens": self.max_tokens.value(),
                "thinking": self.thinking.isChecked(), "thinking_budget": self.thinking_budget.value(),
                "choices": self.choices.value(), "tools": self.tools.toPlainText(),
                "tool_choice": self.tool_choice.currentText(),
                "stop": self.stop.text(), "top_p": self.top_p.value(), "seed": self.seed.value(),
                "system_open": self.system_toggle.isChecked(), "tools_open": self.tools_toggle.isChecked(),
                "sampling_open": self.sampling_toggle.isChecked()}

    def restore(self, st: dict) -> None:
        if not isinstance(st, dict):
            return
        self.prompt.setPlainText(str(st.get("user", "")))
        self.system.setPlainText(str(st.get("system", "")))
        try:
            self.temperature.setValue(float(st.get("temperature", -0.1)))
            self.max_tokens.setValue(int(st.get("max_tokens", 1024)))
            self.thinking_budget.setValue(int(st.get("thinking_budget", 1024)))
            self.choices.setValue(int(st.get("choices", 1)))
        except (TypeError, ValueError):
            pass
        try:   # (apart: a state saved before these existed, or a bad value, leaves the others restored)
            self.top_p.setValue(float(st.get("top_p", -0.05)))
            self.seed.setValue(int(st.get("seed", -1)))
        except (TypeError, ValueError):
            pass
        self.stop.setText(str(st.get("stop", "")))
        self.thinking.setChecked(bool(st.get("thinking", False)))
        self.tools.setPlainText(str(st.get("tools", "")))
        self.tool_choice.setCurrentText(str(st.get("tool_choice", "(default)")))
        self.system_toggle.setChecked(bool(st.get("system_open", False)) or bool(st.get("system")))
        self.tools_toggle.setChecked(bool(st.get("tools_open", False)))
        self.sampling_toggle.setChecked(bool(st.get("sampling_open", False)))
