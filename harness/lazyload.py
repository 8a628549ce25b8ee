"""Names a package exports but loads on first use (PEP 562), so importing the package
costs nothing until one of them is asked for."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, namespace: dict[str, Any],
                 home: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: name -> the submodule (`home[name]`; with a
    leading dot, a module named from the package's parent, as `from ..abi import x`
    would) that defines it, imported when the name is first looked up and then cached
    in the package's `namespace` (its globals())."""
    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value
    return __getattr__
