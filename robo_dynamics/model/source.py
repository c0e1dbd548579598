"""Turn a robot description source into URDF XML text.

A source is one of: the XML text itself (what `robot_description` holds), a path to a
`.urdf` file, or a path to a `.xacro` file (expanded with the `xacro` package).
"""

import os
import pathlib

from ..errors import URDFError


def read_description(source):
    """Return (xml_text, where) for a URDF source; `where` names it in error messages."""
    if isinstance(source, bytes):
        source = source.decode("utf-8")
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source, "robot_description string"
    if not isinstance(source, (str, os.PathLike)):
        raise URDFError(
            f"robot description must be URDF text or a file path, got {type(source).__name__}")
    path = pathlib.Path(source)
    if not path.is_file():
        raise URDFError(f"robot description file not found: {path}")
    if path.suffix == ".xacro":
        return _expand_xacro(path), str(path)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise URDFError(f"cannot read robot description {path}: {exc}") from None


def _expand_xacro(path):
    try:
        import xacro
    except ImportError:  # pragma: no cover - xacro is a pinned dependency
        raise URDFError(f"{path}: the 'xacro' package is needed to expand .xacro files") from None
    try:
        document = xacro.process_file(str(path))
    except Exception as exc:  # xacro raises many kinds (XacroException, XML errors, KeyError)
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise URDFError(f"{path}: xacro expansion failed: {detail}") from None
    return document.toxml()
