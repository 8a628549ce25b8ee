"""The Textual app of `privlab step`: panes for the trap timeline, the code, the
registers, the M and S CSRs, a page-table walk and the console; keys in the footer and
on the `?` screen. Every pane shows a rendering from privlab/inspect, printed with
privlab's theme (harness/theme.py) and handed to Textual as styled text."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from ..errors import PrivlabError
from ..theme import make_console
from .controller import BREAK_HELP, Stepper

__all__ = ["KEYS", "StepApp", "themed"]

# (key, action, what it does): the footer, the help screen and docs/inspect/step.md.
KEYS: tuple[tuple[str, str, str], ...] = (
    ("s", "step", "step one instruction"),
    ("t", "next_trap", "run to the next trap"),
    ("x", "next_xret", "run to the next xRET (mret, sret)"),
    ("y", "next_syscall", "run to the next system call (ecall from U)"),
    ("c", "continue_to", f"continue to a breakpoint: {BREAK_HELP}"),
    ("b", "back_step", "step back one instruction"),
    ("B", "back_trap", "back to the previous trap"),
    ("e", "back_event", "back to just after event number N"),
    ("w", "walk", "the page-table walk for an address"),
    ("question_mark", "help", "this help"),
    ("q", "quit", "quit"),
)

SHORT = {"step": "step", "next_trap": "trap", "next_xret": "xret", "next_syscall": "syscall",
         "continue_to": "continue", "back_step": "back", "back_trap": "back trap",
         "back_event": "back to #", "walk": "walk", "help": "help", "quit": "quit"}


def themed(renderable: RenderableType, width: int) -> Text:
    """`renderable` as privlab's console prints it (its theme's styles), as Text. In
    the palette's own colours, not the terminal's guess (TERM, COLORTERM): Textual
    fits them to the terminal itself, and the screen is the same everywhere."""
    out = io.StringIO()
    console = make_console(width=max(width, 20), file=out, color=True, truecolor=True)
    console.print(renderable, soft_wrap=False)
    return Text.from_ansi(out.getvalue().rstrip("\n"), no_wrap=True)


class Pane(Static):
    """A pane that renders a stepper view at its own width."""

    def __init__(self, title: str, view: Callable[[], RenderableType], **kw: object) -> None:
        super().__init__(**kw)   # type: ignore[arg-type]
        self.border_title = title
        self.view = view
        self.text = Text()          # what the pane shows now (tests read it)

    def refresh_view(self) -> None:
        width = self.size.width or 80
        self.text = themed(self.view(), width - 2)
        self.update(self.text)


class TimelineScroll(VerticalScroll):
    """The timeline's scroller: it keeps the newest event in view. It scrolls when
    the rows' layout changes its height, not when they are handed over (their height
    is not known yet then)."""

    def watch_virtual_size(self) -> None:
        self.scroll_end(animate=False, immediate=True)


class Prompt(ModalScreen[str | None]):
    """One line of input: a breakpoint, an event number, an address."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Static(self.question)
            yield Input(id="answer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Help(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "close")]

    def compose(self) -> ComposeResult:
        t = Text("privlab step: keys\n\n", "bold")
        for key, _action, what in KEYS:
            t.append(f"  {'?' if key == 'question_mark' else key:>3}  ", "bold")
            t.append(what + "\n")
        t.append("\nGoing back re-executes from periodic snapshots: the state shown is "
                 "exactly the forward run's.\nEscape closes this.")
        yield Static(t, id="help")

    def action_close(self) -> None:
        self.dismiss(None)


class StepApp(App[int]):
    TITLE = "privlab step"
    CSS = """
    Screen { layout: vertical; }
    #status { height: 1; padding: 0 1; background: $panel; }
    #top { height: 1fr; }
    #left { width: 9fr; }
    #right { width: 11fr; }
    Pane { border: round $primary-darken-2; padding: 0 0; }
    #timeline-scroll { height: 2fr; border: round $primary-darken-2; }
    #timeline { border: none; }
    #console { height: 1fr; }
    #code { height: auto; }
    #regs { height: auto; }
    #csrs-scroll { height: 1fr; border: round $primary-darken-2; }
    #csrs { border: none; }
    #walk { height: auto; max-height: 14; }
    #prompt { width: 80; height: auto; border: round $accent; background: $surface;
              padding: 1 2; }
    Prompt, Help { align: center middle; }
    #help { width: 90; height: auto; border: round $accent; background: $surface;
            padding: 1 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(k, a, SHORT[a], key_display="?" if k == "question_mark" else None)
        for k, a, _ in KEYS]

    def __init__(self, stepper: Stepper) -> None:
        super().__init__()
        self.stepper = stepper
        self.timeline_shown = Text()

    def compose(self) -> ComposeResult:
        st = self.stepper
        yield Static(id="status")
        with Horizontal(id="top"):
            with Vertical(id="left"):
                with TimelineScroll(id="timeline-scroll"):
                    yield Static(id="timeline")
                yield Pane("console", lambda: Text(st.console_text()[-4000:]), id="console")
            with Vertical(id="right"):
                yield Pane("code", st.code, id="code")
                yield Pane("registers", st.registers, id="regs")
                with VerticalScroll(id="csrs-scroll"):
                    yield Pane("", st.csrs, id="csrs")
                yield Pane("page-table walk", st.walk, id="walk")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#timeline-scroll").border_title = "trap timeline"
        self.query_one("#csrs-scroll").border_title = "CSRs (S and M)"
        self.call_after_refresh(self.refresh_all)

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_all)

    # -- drawing -------------------------------------------------------------------------
    def timeline_text(self, width: int) -> Text:
        tl, rows, current = self.stepper.timeline()
        out = Text()
        out.append_text(themed(tl.header(), width))
        for row in rows:
            raw = tl.line(row)
            raw.truncate(width - 2, overflow="ellipsis")
            line = themed(raw, width)
            if row.seq == current:
                line = Text("▶ ") + line
                line.stylize("reverse")
            else:
                line = Text("  ") + line
            out.append("\n")
            out.append_text(line)
        if not rows:
            out.append("\n  (no events yet)")
        return out

    def refresh_all(self) -> None:
        status = self.query_one("#status", Static)
        line = self.stepper.status()
        if self.stepper.seconds is not None:
            line.append(f" ({self.stepper.seconds * 1e3:.0f} ms)", "muted")
        status.update(themed(line, max(status.size.width, 80)))
        scroll = self.query_one("#timeline-scroll", VerticalScroll)
        self.timeline_shown = self.timeline_text(max(scroll.size.width - 4, 40))
        self.query_one("#timeline", Static).update(self.timeline_shown)
        for pane in self.query(Pane):
            pane.refresh_view()

    def _do(self, move: Callable[[], None]) -> None:
        try:
            move()
        except PrivlabError as e:
            self.stepper.message = str(e)
        self.refresh_all()

    def _ask(self, question: str, move: Callable[[str], None]) -> None:
        def answered(text: str | None) -> None:
            if text is not None:
                self._do(lambda: move(text))
        self.push_screen(Prompt(question), answered)

    # -- actions (the keys) -------------------------------------------------------------
    def action_step(self) -> None:
        self._do(self.stepper.step)

    def action_next_trap(self) -> None:
        self._do(self.stepper.next_trap)

    def action_next_xret(self) -> None:
        self._do(self.stepper.next_xret)

    def action_next_syscall(self) -> None:
        self._do(self.stepper.next_syscall)

    def action_continue_to(self) -> None:
        self._ask(f"continue to ({BREAK_HELP}):", self.stepper.continue_to)

    def action_back_step(self) -> None:
        self._do(self.stepper.back_step)

    def action_back_trap(self) -> None:
        self._do(self.stepper.back_trap)

    def action_back_event(self) -> None:
        self._ask("back to just after event number:", self.stepper.back_event)

    def action_walk(self) -> None:
        self._ask("page-table walk for the address:", self.stepper.set_walk)

    def action_help(self) -> None:
        self.push_screen(Help())
