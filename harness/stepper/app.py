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
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from ..errors import PrivlabError
from ..inspect.regview import RegisterView
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

MIN_LEFT = 40         # the left column's least width with 3 or 2 register columns
MIN_LEFT_WIDE = 90    # ... and to take 4 (the timeline reads better wide)
MIN_RIGHT = 60        # the CSRs' decoded fields need some room even on RV32
TIMELINE_WIDTH = 80   # a left column narrower than this: the timeline goes across the top
TOP_TIMELINE_ROWS = 8  # ... at least this tall
RIGHT_ROWS = 30       # ... leaving this many rows for registers, trap CSRs and a few more
WIDE_CODE = 60        # a code pane this wide shows the instruction bytes
CONSOLE_CHARS = 8000  # the console's tail the pane looks at

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

    def on_resize(self) -> None:
        """Drawn again at the new width as soon as the layout gives it one."""
        self.refresh_view()

    def refresh_view(self) -> None:
        width = self.size.width or 80          # inside the border
        self.text = themed(self.view(), width)
        self.update(self.text)


class ConsolePane(Pane):
    """The console: its last lines, as many as the pane holds."""

    def __init__(self, title: str, text: Callable[[], str], **kw: object) -> None:
        super().__init__(title, lambda: Text(self.tail(text())), **kw)

    def tail(self, text: str) -> str:
        rows = max(self.size.height, 1)        # inside the border
        width = max(self.size.width, 1)
        lines: list[str] = []
        for line in text[-CONSOLE_CHARS:].split("\n"):
            lines += [line[i:i + width] for i in range(0, len(line), width)] or [""]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines[-rows:])


class TimelineScroll(VerticalScroll):
    """The timeline's scroller: it keeps the newest event in view. It scrolls when
    the rows' layout changes its height, not when they are handed over (their height
    is not known yet then)."""

    def watch_virtual_size(self) -> None:
        self.scroll_end(animate=False, immediate=True)

    def on_resize(self) -> None:
        if isinstance(self.app, StepApp):
            self.app.refresh_timeline()


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
    #left { width: 1fr; }
    #right { width: 77; }
    Pane { border: round $primary-darken-2; padding: 0 0; }
    .timeline-scroll { height: 1fr; min-height: 6; border: round $primary-darken-2; }
    Screen.narrow #timeline-scroll { display: none; }
    Screen.wide #timeline-top-scroll { display: none; }
    #code { height: auto; }
    #console { height: 8; }
    Screen.narrow #console { height: 1fr; }
    #regs { height: auto; }
    #trap { height: auto; border: round $accent; }
    #csrs-scroll { height: 1fr; border: round $primary-darken-2; }
    #csrs-scroll Pane { border: none; }
    #walk { height: auto; border-top: solid $primary-darken-2; }
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
        self.reg_columns = 3

    def compose(self) -> ComposeResult:
        st = self.stepper
        yield Static(id="status")
        # The timeline across the screen when the left column would be too narrow
        # for its rows, else at the top of the left column: the same rows.
        with TimelineScroll(id="timeline-top-scroll", classes="timeline-scroll"):
            yield Static(id="timeline-top", classes="timeline")
        with Horizontal(id="top"):
            with Vertical(id="left"):
                with TimelineScroll(id="timeline-scroll", classes="timeline-scroll"):
                    yield Static(id="timeline", classes="timeline")
                yield Pane("code", lambda: st.code(compact=self.code_width() < WIDE_CODE),
                           id="code")
                yield ConsolePane("console", st.console_text, id="console")
            with Vertical(id="right"):
                yield Pane("registers", lambda: st.registers(self.reg_columns), id="regs")
                yield Pane("trap CSRs", st.trap_csrs, id="trap")
                with VerticalScroll(id="csrs-scroll"):
                    yield Pane("", st.csrs, id="csrs")
                    yield Pane("page-table walk", st.walk, id="walk")
        yield Footer()

    def on_mount(self) -> None:
        for scroll in self.query(".timeline-scroll"):
            scroll.border_title = "trap timeline"
        self.query_one("#csrs-scroll").border_title = "all CSRs (S and M), page-table walk"
        self.fit(self.size.width, self.size.height)
        self.call_after_refresh(self.refresh_all)

    def on_resize(self, event: events.Resize) -> None:
        self.fit(event.size.width, event.size.height)
        self.call_after_refresh(self.refresh_all)

    def code_width(self) -> int:
        return self.query_one("#code", Pane).size.width

    def fit(self, width: int, height: int) -> None:
        """Size the right column to the register grid with the most columns that
        leaves the left one room (every name and full value shown): 4 columns from
        about 200 cells wide on RV64, 3 from 120. A left column too narrow for the
        timeline's rows leaves the timeline a band across the top instead, as tall
        as the registers and trap CSRs below it allow."""
        xlen = self.stepper.s.machine.xlen
        for columns, left in ((4, MIN_LEFT_WIDE), (3, MIN_LEFT), (2, MIN_LEFT), (1, 0)):
            right = RegisterView.width(columns, xlen) + 2
            if width - right >= left:
                break
        self.reg_columns = columns
        right = max(right, MIN_RIGHT)
        self.query_one("#right").styles.width = right
        narrow = width - right < TIMELINE_WIDTH
        self.screen.set_class(narrow, "narrow")
        self.screen.set_class(not narrow, "wide")
        self.query_one("#timeline-top-scroll").styles.height = \
            max(TOP_TIMELINE_ROWS, height - RIGHT_ROWS - 2)

    # -- drawing -------------------------------------------------------------------------
    def timeline_text(self, width: int) -> Text:
        tl, rows, current = self.stepper.timeline()
        out = Text(no_wrap=True, overflow="crop")
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
        self.refresh_timeline()
        self.query_one("#trap", Pane).border_title = self.stepper.trap_title()
        for pane in self.query(Pane):
            pane.refresh_view()

    def refresh_timeline(self) -> None:
        narrow = self.screen.has_class("narrow")
        scroll = self.query_one("#timeline-top-scroll" if narrow else "#timeline-scroll",
                                TimelineScroll)
        self.timeline_shown = self.timeline_text(max(scroll.scrollable_content_region.width, 20))
        scroll.query_one(".timeline", Static).update(self.timeline_shown)
        scroll.call_after_refresh(scroll.scroll_end, animate=False, immediate=True)

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
