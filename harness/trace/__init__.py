"""Trace events and their formats."""

from harness.trace.events import Event, EventLog, TrapEvent, XretEvent

__all__ = ["Event", "EventLog", "TrapEvent", "XretEvent"]
