"""Bare-metal conformance programs: trap delivery checked on QEMU 7.2 and on privlab."""
