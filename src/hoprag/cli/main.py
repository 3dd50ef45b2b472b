"""The entry point: parse, run the command, report a failure as one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hoprag.cli.common import CliError
from hoprag.cli.parser import build_parser
from hoprag.errors import HopragError, InvalidInputError
from hoprag.termsafe import safe

if TYPE_CHECKING:
    pass


def error_text(exc: BaseException) -> str:
    """The message of `exc`, terminal-safe: a JSONL file's problems one per line, every other
    message on one line (a newline in it shows as `\\x0a`)."""
    from hoprag.datasets import JsonlValidationError

    if isinstance(exc, JsonlValidationError):
        shown = [f"  {safe(e)}" for e in exc.errors[:20]]
        if len(exc.errors) > 20:
            shown.append(f"  ... and {len(exc.errors) - 20} more")
        head = f"{safe(exc.path)}: {len(exc.errors)} bad record field(s):"
        return "\n".join([head, *shown])
    return safe(exc)


def _report(exc: BaseException, code: int) -> int:
    print(f"hoprag: error: {error_text(exc)}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used by the `hoprag` script)."""
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except CliError as exc:
        return _report(exc, exc.code)
    except InvalidInputError as exc:
        return _report(exc, 2)
    except HopragError as exc:
        return _report(exc, 1)
    except KeyboardInterrupt:
        print("\nhoprag: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except (OSError, ValueError, TypeError) as exc:
        print(f"hoprag: error: {type(exc).__name__}: {error_text(exc)}", file=sys.stderr)
        return 1
