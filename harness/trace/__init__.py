"""Trace events and their formats."""

from ..machine.events import Event, EventLog, TrapEvent, XretEvent

__all__ = ["Event", "EventLog", "TrapEvent", "XretEvent"]
