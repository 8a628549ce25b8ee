"""Export the trap flow as one self-contained HTML page: a sequence diagram.

Three lifelines (U, S, M) and one arrow per trap or xRET, top to bottom, labelled
with the cause, the decoded system call or SBI call and the result. Everything is
inline (SVG, CSS, a few lines of script): the page makes no network request, so it
opens from a file or an e-mail attachment. Clicking an event highlights its pair (a
trap and the xRET that returns from it). Colours come from privlab/inspect/theme.py.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import IO

from ..abi.csr import Priv
from ..theme import PALETTE
from .flow import FlowRow

__all__ = ["MAX_ROWS", "render_html", "write_html"]

MAX_ROWS = 5000
LANE_X = {Priv.U: 90, Priv.S: 250, Priv.M: 410}
TOP, STEP, LABEL_X = 70, 24, 470

_CSS = """
body { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       margin: 16px; color: #222; background: #fff; }
h1 { font-size: 16px; margin: 0 0 4px; }
p.meta { margin: 0 0 12px; color: #555; }
svg text { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.lane { stroke: #bbb; stroke-dasharray: 4 3; }
.lane-head { font-weight: bold; }
g.event { cursor: pointer; }
g.event:hover text, g.event.paired text { font-weight: bold; }
g.event.paired line { stroke-width: 3; }
.seq { fill: #888; }
.muted { fill: #777; }
"""

_JS = """
(function () {
  var events = document.querySelectorAll('g.event');
  var bySeq = {};
  events.forEach(function (g) { bySeq[g.dataset.seq] = g; });
  events.forEach(function (g) {
    g.addEventListener('click', function () {
      document.querySelectorAll('g.paired').forEach(function (x) {
        x.classList.remove('paired'); });
      var mate = bySeq[g.dataset.returnsFrom] ||
        document.querySelector('g.event[data-returns-from="' + g.dataset.seq + '"]');
      g.classList.add('paired');
      if (mate) { mate.classList.add('paired'); }
    });
  });
  document.body.dataset.events = String(events.length);
  document.body.dataset.ready = '1';
})();
"""


def _label(row: FlowRow) -> tuple[str, str]:
    """(main text, detail text) of one arrow."""
    name, detail = _plain_label(row)
    return name, f"{row.signal}  {detail}".strip() if row.signal else detail


def _plain_label(row: FlowRow) -> tuple[str, str]:
    if row.is_trap:
        if row.syscall is not None:
            return row.name, row.syscall.call_text()
        return row.name, row.note or (f"tval {row.tval:#x}" if row.tval else "")
    call = row.syscall
    if call is not None and call.exit_seq == row.seq:
        return row.name, f"{call.name} → {call.ret_text()}"
    return row.name, row.note


def _arrow(row: FlowRow, y: int) -> str:
    x1, x2 = LANE_X[row.priv_from], LANE_X[row.priv_to]
    colour = PALETTE[row.priv_to.letter] if row.is_trap else PALETTE["xret"]
    dash = "" if row.is_trap else ' stroke-dasharray="6 3"'
    main, detail = _label(row)
    attrs = (f'class="event" data-seq="{row.seq}" data-kind="{"trap" if row.is_trap else "xret"}"'
             f' data-from="{row.priv_from.letter}" data-to="{row.priv_to.letter}"'
             f' data-name="{html.escape(row.name)}"')
    if row.returns_from is not None:
        attrs += f' data-returns-from="{row.returns_from}"'
    if x1 == x2:   # a trap that stays at its level: a small loop
        shape = (f'<path d="M{x1} {y - 6} h 24 v 12 h -20" fill="none" stroke="{colour}" '
                 f'stroke-width="2" marker-end="url(#head)"/>')
    else:
        end = x2 - 6 if x2 > x1 else x2 + 6
        shape = (f'<line x1="{x1}" y1="{y}" x2="{end}" y2="{y}" stroke="{colour}" '
                 f'stroke-width="2"{dash} marker-end="url(#head)" color="{colour}"/>'
                 f'<circle cx="{x1}" cy="{y}" r="3.5" fill="{PALETTE[row.priv_from.letter]}"/>')
    return (f'<g {attrs}><title>#{row.seq} instret {row.instret}</title>{shape}'
            f'<text x="20" y="{y + 4}" class="seq">#{row.seq}</text>'
            f'<text x="{LABEL_X}" y="{y + 4}" fill="{colour}">{html.escape(main)}</text>'
            f'<text x="{LABEL_X + 8 + 7 * len(main)}" y="{y + 4}">{html.escape(detail)}</text>'
            f'</g>')


def render_html(rows: Iterable[FlowRow], title: str = "privlab trap flow",
                limit: int = MAX_ROWS) -> str:
    shown: list[FlowRow] = []
    total = 0
    for row in rows:
        total += 1
        if len(shown) < limit:
            shown.append(row)
    height = TOP + STEP * (len(shown) + 1)
    width = LABEL_X + 620
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
             '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" '
             'fill="context-stroke"/></marker></defs>']
    for p, x in LANE_X.items():
        name = {Priv.U: "U user", Priv.S: "S kernel", Priv.M: "M firmware"}[p]
        parts.append(f'<text x="{x}" y="30" text-anchor="middle" class="lane-head" '
                     f'fill="{PALETTE[p.letter]}">{name}</text>')
        parts.append(f'<line class="lane" data-lane="{p.letter}" x1="{x}" y1="40" x2="{x}" '
                     f'y2="{height - 10}"/>')
    for i, row in enumerate(shown):
        parts.append(_arrow(row, TOP + STEP * i))
    parts.append("</svg>")
    note = (f"{total} events" if total == len(shown) else
            f"first {len(shown)} of {total} events (narrow the trace with --range or filters)")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p class=\"meta\">{note}; solid arrows are traps, "
            "dashed ones xRETs; click an event to see its pair.</p>"
            + "".join(parts) + f"<script>{_JS}</script></body></html>\n")


def write_html(rows: Iterable[FlowRow], out: IO[str], title: str = "privlab trap flow",
               limit: int = MAX_ROWS) -> None:
    out.write(render_html(rows, title, limit))
