"""The base page, on its own: 4 KiB (privileged spec 4.3, the same for every paged
scheme and for Unicorn's RISC-V mappings). The machine rounds device mappings to whole
pages with it without loading the page-table formats; abi/paging.py exports both
names with the rest."""

from __future__ import annotations

__all__ = ["PAGE_SHIFT", "PAGE_SIZE"]

PAGE_SHIFT = 12
PAGE_SIZE = 1 << PAGE_SHIFT
