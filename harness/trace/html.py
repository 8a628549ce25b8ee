"""Export the trap flow as one self-contained HTML page: a sequence diagram that says
who did what.

Three lifelines (U, S, M) and one row per trap or xRET, top to bottom: its arrow, who
it belongs to (`pid 2`, `pid 1 tid 1`, `satp 0x...` for a process privlab cannot
name, `kernel`; `hart 1` under --smp) in that process's colour, the cause, the
decoded system call or SBI call or the result, and where (`at grow+0x28`, `to
fork+0x8`). Runs of identical rows are one row with a count (harness/trace/fold.py)
that a click unfolds. Clicking a row shows, beside the diagram, what the stepper
shows for that moment: the CSRs of the level that took the trap (or that the xRET
leaves) before and after, fields decoded and changes marked, and for a system call
its registers in the trap frame; it also highlights the row's pair (a trap and the
xRET that returns from it).

The CSRs before a trap are as the events before it left them: xepc from the last
trap into that level or the last xRET out of it (which jumps to xepc), xcause and
xtval from the last trap into it; `?` until one was seen (or when a filter hid it).

Everything is inline (CSS, SVG, a few lines of script): the page makes no network
request, so it opens from a file or an e-mail attachment. Colours come from
harness/theme.py, and per process from PROCESS_COLOURS below.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, Any

from ..abi.csr import SSTATUS_MASK, Csr, Priv, csr_fields, decode_cause
from ..abi.csr import cause_name as _cause_name
from ..theme import PALETTE
from .flow import FlowRow
from .fold import TIMES, Fold, fold_rows
from .syscalls import CallSpec
from .who import where

if TYPE_CHECKING:
    from ..kernelinfo.symbols import Location

__all__ = ["MAX_ROWS", "PROCESS_COLOURS", "render_html", "write_html"]

MAX_ROWS = 5000
LANE_X = {Priv.U: 40, Priv.S: 140, Priv.M: 240}
LANES_WIDTH = 280
ROW_HEIGHT = 22
# One colour per process, by pid (address spaces privlab cannot name: in order seen);
# the kernel's own rows are grey. Chosen apart from each other and from the lanes'.
PROCESS_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
                   "#e377c2", "#8c564b", "#bcbd22", "#393b79")
KERNEL_COLOUR = "#8a8a8a"

RowLocator = Callable[[FlowRow], "Location | None"]

_CSS = """
body { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       margin: 16px; color: #222; background: #fff; }
h1 { font-size: 16px; margin: 0 0 4px; }
p.meta { margin: 0 0 8px; color: #555; }
#legend span { display: inline-block; margin: 0 10px 6px 0; }
#legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
#page { display: flex; align-items: flex-start; gap: 16px; }
#flow { flex: 0 0 auto; }
#detail { position: sticky; top: 8px; flex: 1 1 360px; min-width: 320px; max-width: 640px;
          overflow-x: auto;
          border: 1px solid #ccc; padding: 8px 10px; background: #fafafa; }
#detail:empty::before { content: "Click a row to see its CSRs and trap frame."; color: #777; }
#detail table { border-collapse: collapse; margin: 4px 0 8px; width: 100%; }
#detail td:last-child { overflow-wrap: anywhere; }
#detail td, #detail th { padding: 1px 6px; text-align: left; vertical-align: top; }
#detail th { color: #555; font-weight: normal; }
#detail .changed { background: #f4a261; color: #000; }
#detail h2 { font-size: 13px; margin: 6px 0 2px; }
.heads { display: flex; position: sticky; top: 0; background: #fff; z-index: 1; }
.heads svg text { font-weight: bold; }
.event { display: flex; align-items: center; height: 22px; white-space: nowrap;
         cursor: pointer; }
.event:hover, .event.paired { background: #f0f0f0; }
.event.paired .label { font-weight: bold; }
.event.current { outline: 2px solid #444; }
.seq { width: 56px; text-align: right; color: #888; padding-right: 6px; }
svg.lanes { flex: 0 0 auto; }
.lane { stroke: #bbb; stroke-dasharray: 4 3; }
.who { display: inline-block; min-width: 64px; padding: 0 4px; margin-right: 8px;
       color: #fff; border-radius: 3px; text-align: center; }
.where { color: #2e8b57; margin-left: 8px; }
.detail-text { margin-left: 8px; }
.count { font-weight: bold; margin-left: 8px; }
.rest { margin-left: 8px; }
.fold > .rows { display: none; border-left: 3px solid #ccc; }
.fold.open > .rows { display: block; }
.fold > .event .toggle::before { content: "\\25B8 "; }
.fold.open > .event .toggle::before { content: "\\25BE "; }
"""

_JS = """
(function () {
  var data = JSON.parse(document.getElementById('rows').textContent);
  var fields = JSON.parse(document.getElementById('fields').textContent);
  var detail = document.getElementById('detail');
  var events = document.querySelectorAll('.event[data-seq]');
  var bySeq = {};
  events.forEach(function (e) { if (!e.classList.contains('folded')) bySeq[e.dataset.seq] = e; });
  function esc(s) { var d = document.createElement('span'); d.textContent = s; return d.innerHTML; }
  function decode(csr, hex) {
    var f = fields[csr.replace(/ .*/, '')];
    if (!f || hex === null) return null;
    var v = BigInt(hex), out = {};
    f.forEach(function (x) {
      out[x[0]] = ((v >> BigInt(x[1])) & ((1n << BigInt(x[2])) - 1n)).toString();
    });
    return out;
  }
  function show(seq) {
    var d = data[seq];
    if (!d) return;
    var h = '<h2>#' + seq + ' ' + esc(d.title) + '</h2><div>' + esc(d.who) + ' &middot; ' +
      esc(d.where) + ' &middot; instret ' + d.instret + '</div>';
    h += '<h2>' + esc(d.level) + '</h2><table><tr><th>CSR</th><th>before</th><th>after</th>' +
      '<th>fields</th></tr>';
    d.csrs.forEach(function (c) {
      var b = c[1], a = c[2], changed = b !== a;
      var fb = decode(c[0], b), fa = decode(c[0], a), fs = [];
      if (fa) {
        Object.keys(fa).forEach(function (k) {
          var was = fb ? fb[k] : null;
          fs.push(was !== null && was !== fa[k] ?
            '<span class="changed">' + k + '=' + was + '\\u2192' + fa[k] + '</span>' :
            k + '=' + fa[k]);
        });
      } else if (c[3]) { fs.push(esc(c[3])); }
      h += '<tr data-csr="' + esc(c[0]) + '"' + (changed ? ' class="csr-changed"' : '') +
        '><td>' + esc(c[0]) + '</td><td>' + (b === null ? '?' : b) + '</td><td' +
        (changed ? ' class="changed"' : '') + '>' + a + '</td><td>' + fs.join(' ') +
        '</td></tr>';
    });
    h += '</table>';
    if (d.frame) {
      h += '<h2>trap frame: the call\\'s registers</h2><table>';
      d.frame.forEach(function (r) {
        h += '<tr><td>' + esc(r[0]) + '</td><td>' + esc(r[1]) + '</td><td>' + esc(r[2]) +
          '</td></tr>';
      });
      h += '</table>';
    }
    detail.innerHTML = h;
    detail.dataset.seq = seq;
  }
  events.forEach(function (e) {
    e.addEventListener('click', function () {
      var fold = e.classList.contains('folded') ? e.parentNode : null;
      if (fold) { fold.classList.toggle('open'); }
      document.querySelectorAll('.paired, .current').forEach(function (x) {
        x.classList.remove('paired'); x.classList.remove('current'); });
      e.classList.add('current', 'paired');
      var mate = bySeq[e.dataset.returnsFrom] ||
        document.querySelector('.event[data-returns-from="' + e.dataset.seq + '"]');
      if (mate && !fold) { mate.classList.add('paired'); }
      show(e.dataset.seq);
    });
  });
  document.body.dataset.events = String(Object.keys(bySeq).length);
  document.body.dataset.ready = '1';
})();
"""


class _Colours:
    """A colour per process (by pid) or unnamed address space."""

    def __init__(self) -> None:
        self._spaces: dict[int, int] = {}

    def of(self, row: FlowRow) -> str:
        if row.pid is not None:
            return PROCESS_COLOURS[(row.pid - 1) % len(PROCESS_COLOURS)]
        if row.owner:
            n = self._spaces.setdefault(row.owner, len(self._spaces))
            return PROCESS_COLOURS[n % len(PROCESS_COLOURS)]
        return KERNEL_COLOUR


def _label(row: FlowRow) -> tuple[str, str]:
    """(main text, detail text) of one row."""
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


def _lanes(row: FlowRow | None) -> str:
    """One row's slice of the lifelines, with its arrow (None: the heads)."""
    parts = [f'<svg class="lanes" width="{LANES_WIDTH}" height="{ROW_HEIGHT}">']
    for p, x in LANE_X.items():
        if row is None:
            name = {Priv.U: "U user", Priv.S: "S kernel", Priv.M: "M firmware"}[p]
            parts.append(f'<text x="{x}" y="16" text-anchor="middle" fill="{PALETTE[p.letter]}"'
                         f'>{name}</text>')
        else:
            parts.append(f'<line class="lane" data-lane="{p.letter}" x1="{x}" y1="0" x2="{x}" '
                         f'y2="{ROW_HEIGHT}"/>')
    if row is not None:
        y = ROW_HEIGHT // 2
        x1, x2 = LANE_X[row.priv_from], LANE_X[row.priv_to]
        colour = PALETTE[row.priv_to.letter] if row.is_trap else PALETTE["xret"]
        if x1 == x2:   # a trap that stays at its level: a small loop
            parts.append(f'<path d="M{x1} {y - 6} h 24 v 12 h -20" fill="none" '
                         f'stroke="{colour}" stroke-width="2" marker-end="url(#head)"/>')
        else:
            dash = "" if row.is_trap else ' stroke-dasharray="6 3"'
            end = x2 - 6 if x2 > x1 else x2 + 6
            parts.append(f'<line x1="{x1}" y1="{y}" x2="{end}" y2="{y}" stroke="{colour}" '
                         f'stroke-width="2"{dash} marker-end="url(#head)" color="{colour}"/>'
                         f'<circle cx="{x1}" cy="{y}" r="3.5" '
                         f'fill="{PALETTE[row.priv_from.letter]}"/>')
    parts.append("</svg>")
    return "".join(parts)


class _Page:
    def __init__(self, locate: RowLocator | None, xlen: int, specs: dict[int, CallSpec],
                 harts: int) -> None:
        self.locate = locate
        self.xlen = xlen
        self.specs = specs
        self.harts = harts
        self.colours = _Colours()
        self.data: dict[int, dict[str, Any]] = {}
        self.legend: dict[str, str] = {}
        # per (hart, level): xepc, xcause, xtval as the events so far left them
        self._state: dict[tuple[int, Priv], dict[str, str]] = {}

    def who(self, row: FlowRow) -> str:
        who = row.who
        return f"{who} hart {row.hart}" if self.harts > 1 else who

    def row(self, row: FlowRow, extra: str = "", folded: bool = False) -> str:
        main, detail = _label(row)
        colour = self.colours.of(row)
        if row.owner:
            self.legend.setdefault(f"{row.who.split(' tid')[0]} {row.process}".rstrip(), colour)
        attrs = (f'class="event{" folded" if folded else ""}" data-seq="{row.seq}" '
                 f'data-kind="{"trap" if row.is_trap else "xret"}" '
                 f'data-from="{row.priv_from.letter}" data-to="{row.priv_to.letter}" '
                 f'data-name="{html.escape(row.name)}" data-who="{html.escape(row.who)}" '
                 f'data-hart="{row.hart}"')
        if row.returns_from is not None:
            attrs += f' data-returns-from="{row.returns_from}"'
        style = "trap.interrupt" if row.interrupt else "exception" if row.is_trap else "xret"
        colour_main = PALETTE["interrupt" if style == "trap.interrupt" else style]
        toggle = '<span class="toggle"></span>' if folded else ""
        return (f'<div {attrs} title="#{row.seq} instret {row.instret}">'
                f'<span class="seq">{toggle}#{row.seq}</span>{_lanes(row)}'
                f'<span class="who" style="background:{colour}">{html.escape(self.who(row))}'
                f'</span><span class="label" style="color:{colour_main}">'
                f'{html.escape(main)}</span>'
                f'<span class="detail-text">{html.escape(detail)}</span>'
                f'<span class="where">{html.escape(where(row, self.locate))}</span>'
                f'{extra}</div>')

    def fold(self, fold: Fold) -> str:
        rest = "".join(f" / {r.name}" for r in fold.unit[1:])
        summary = self.row(fold.first, f'<span class="label rest">{html.escape(rest)}</span>'
                           f'<span class="count">{TIMES}{fold.count}</span>', folded=True)
        inner = "".join(self.row(r) for r in fold.rows)
        return (f'<div class="fold" data-count="{fold.count}" data-first="{fold.first.seq}" '
                f'data-last="{fold.last.seq}">{summary}<div class="rows">{inner}</div></div>')

    # -- what a click shows --------------------------------------------------------
    def see(self, row: FlowRow) -> None:
        """Record the row's detail, then what it did to its level's CSRs."""
        level = row.priv_to if row.is_trap else row.priv_from
        key = (row.hart, level)
        state = self._state.setdefault(key, {})
        x = "s" if level is Priv.S else "m" if level is Priv.M else None
        title = " ".join(t for t in _label(row) if t)
        d: dict[str, Any] = {"title": title, "who": self.who(row),
                             "where": where(row, self.locate), "instret": row.instret}
        if x is None:      # a trap into U or an xRET from U: no such level here
            d["level"], d["csrs"] = f"{level.letter}-mode", []
            self.data[row.seq] = d
            return
        mask = SSTATUS_MASK[self.xlen] if x == "s" else (1 << self.xlen) - 1
        status = (f"{x}status", f"{row.status_before & mask:#x}",
                  f"{row.status_after & mask:#x}", "")
        if row.is_trap:
            d["level"] = f"{level.letter}-mode CSRs: the trap took it"
            after = {"epc": f"{row.pc:#x}", "cause": f"{row.cause:#x}",
                     "tval": f"{row.tval:#x}"}
            csrs = [status,
                    (f"{x}epc", state.get("epc"), after["epc"], ""),
                    (f"{x}cause", state.get("cause"), after["cause"],
                     self._cause(state.get("cause")) + " \u2192 " + self._cause(after["cause"])),
                    (f"{x}tval", state.get("tval"), after["tval"], ""),
                    ("pc", f"{row.pc:#x}", f"{row.target:#x}", "the handler (the vector)")]
            state.update(after)
        else:
            d["level"] = f"{level.letter}-mode CSRs: the {row.name} leaves it"
            epc = f"{row.target:#x}"
            csrs = [status,
                    (f"{x}epc", state.get("epc"), epc, f"{row.name} jumps to {x}epc"),
                    ("pc", f"{row.pc:#x}", f"{row.target:#x}",
                     f"{row.priv_from.letter}-mode to {row.priv_to.letter}-mode")]
            state["epc"] = epc
        if x == "s":
            csrs.append(("satp", f"{row.satp:#x}", f"{row.satp:#x}", ""))
        d["csrs"] = csrs
        call = row.syscall
        if call is not None and row.is_trap and row.seq == call.entry_seq:
            d["frame"] = self._frame(row)
        self.data[row.seq] = d

    def _cause(self, hex_cause: str | None) -> str:
        if hex_cause is None:
            return "?"
        irq, code = decode_cause(int(hex_cause, 16), self.xlen)
        return _cause_name(irq, code)

    def _frame(self, row: FlowRow) -> list[tuple[str, str, str]]:
        call = row.syscall
        assert call is not None
        spec = call.spec
        names = [a.name for a in spec.args] if spec is not None else []
        out = [(f"a{i}", f"{v:#x}", names[i] if i < len(names) else "")
               for i, v in enumerate(row.args[:7])]
        out.append(("a7", str(row.args[7]), f"the call's number: {call.name}"))
        out.append(("epc", f"{row.pc:#x}", f"the ecall; the kernel returns to epc + 4 "
                                           f"({row.pc + 4:#x})"))
        if call.outcome == "returned":
            out.append(("a0 at the return", call.ret_text(), f"#{call.exit_seq}"))
        return out


def _fields(xlen: int) -> dict[str, list[tuple[str, int, int]]]:
    """The status fields the page decodes, from harness/abi/csr.py."""
    return {name: [(f.name, f.position(xlen), f.width) for f in csr_fields(csr, xlen)]
            for name, csr in (("sstatus", Csr.SSTATUS), ("mstatus", Csr.MSTATUS),
                              ("satp", Csr.SATP))}


def _key(row: FlowRow) -> tuple[object, ...]:
    return (row.is_trap, row.priv_from, row.priv_to, row.code, row.interrupt, row.who,
            _label(row), row.pc if row.is_trap else row.target, row.path)


def render_html(rows: Iterable[FlowRow], title: str = "privlab trap flow",
                limit: int = MAX_ROWS, locate: RowLocator | None = None, xlen: int = 64,
                specs: dict[int, CallSpec] | None = None, fold: bool = True) -> str:
    shown: list[FlowRow] = []
    total = 0
    harts = 1
    for row in rows:
        total += 1
        if len(shown) < limit:
            shown.append(row)
            harts = max(harts, row.hart + 1)
    page = _Page(locate, xlen, specs or {}, harts)
    for row in shown:
        page.see(row)
    items = fold_rows(shown, _key) if fold else shown
    body = "".join(page.fold(it) if isinstance(it, Fold) else page.row(it) for it in items)
    legend = "".join(f'<span><i style="background:{c}"></i>{html.escape(n)}</span>'
                     for n, c in page.legend.items())
    note = (f"{total} events" if total == len(shown) else
            f"first {len(shown)} of {total} events (narrow the trace with --range or filters)")
    data = json.dumps({str(k): v for k, v in page.data.items()}, separators=(",", ":"))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p class=\"meta\">{note}; solid arrows are traps, "
            "dashed ones xRETs; click a row for its CSRs and its pair, a folded row "
            f"({TIMES}N) to unfold it.</p><div id=\"legend\">{legend}</div>"
            '<svg width="0" height="0" style="position:absolute"><defs><marker id="head" '
            'viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="context-stroke"/>'
            '</marker></defs></svg>'
            f'<div id="page"><div id="flow"><div class="heads"><span class="seq"></span>'
            f'{_lanes(None)}</div>{body}</div><aside id="detail"></aside></div>'
            f'<script type="application/json" id="rows">{_safe(data)}</script>'
            f'<script type="application/json" id="fields">{_safe(json.dumps(_fields(xlen)))}'
            f"</script><script>{_JS}</script></body></html>\n")


def _safe(text: str) -> str:
    """JSON inside a script element: no `</` can end it early."""
    return text.replace("</", "<\\/")


def write_html(rows: Iterable[FlowRow], out: IO[str], title: str = "privlab trap flow",
               limit: int = MAX_ROWS, locate: RowLocator | None = None, xlen: int = 64,
               specs: dict[int, CallSpec] | None = None) -> None:
    out.write(render_html(rows, title, limit, locate, xlen, specs))
