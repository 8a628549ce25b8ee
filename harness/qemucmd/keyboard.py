"""Console input as a person types it: `Typed` wraps the UART's input source (a pipe,
a terminal, --input) so that nothing has arrived when the machine starts.

A person's first key reaches the UART after the guest has started and looked at the
line at least once. Scripted or piped input is all there at reset instead, and
firmware that empties the receive buffer while it sets the UART up — OpenSBI's 8250
driver reads LSR and then RBR without looking at LSR's data-ready bit — would take the
first byte and drop it. So:

- the guest's first look at the line status finds nothing: the keys are still on
  their way. A guest that waits for the receive interrupt instead (IER's receive bit
  set: `attach` gives the UART) sees them at once, as the interrupt a key raises;
- a read of RBR takes a byte only when the guest's last look found one (data ready
  in LSR, or the receive interrupt), as a byte that arrives between a look and a read
  would; a blind read finds the buffer empty (0) and leaves the byte for later.

The source is `live`: the run loop looks at it every few instructions (as for a
terminal), so a guest that waits in wfi for the receive interrupt after its first
look has found nothing still gets the keys.
"""

from __future__ import annotations

from ..devices.uart import Ier, InputSource, Uart

__all__ = ["Typed"]


class Typed:
    """An InputSource whose bytes arrive as typed keys do (module docstring)."""

    live = True

    def __init__(self, inner: InputSource) -> None:
        self.inner = inner
        self._uart: Uart | None = None
        self._looked = False         # the guest has looked once: the keys may arrive
        self._seen = False           # the last look found a byte

    def attach(self, uart: Uart) -> None:
        """The UART this source feeds: its IER says whether the guest waits for the
        receive interrupt."""
        self._uart = uart

    def peek(self) -> bool:
        if not self._looked:
            self._looked = True
            if self._uart is None or not self._uart.ier & Ier.RDI:
                self._seen = False
                return False
        self._seen = self.inner.peek()
        return self._seen

    def take(self) -> int:
        if not self._seen:
            return 0
        self._seen = False
        byte = self.inner.take()
        self._seen = self.inner.peek()     # the next byte is in the FIFO behind it
        return byte

    def ended(self) -> bool:
        return self.inner.ended()
