"""`privlab step`: an interactive trap stepper with time travel.

`Stepper` (controller.py) holds a recorded Session and does the moves, forward and
back; `StepApp` (app.py) is the Textual app that shows it with the inspectors' own
renderings (harness/inspect) in its panes."""

from .controller import Breakpoint, Stepper, parse_breakpoint

__all__ = ["Breakpoint", "Stepper", "parse_breakpoint"]
