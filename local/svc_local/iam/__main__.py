"""python -m svc_local.iam report <record> | grants."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from svc_local.iam.report import grants_markdown, report
from svc_local.template import load_yaml


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m svc_local.iam")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="calls per function, unused grants; exit 1 on any denial")
    rep.add_argument("record", type=Path)
    grants = sub.add_parser("grants", help="write the before/after table of granted actions")
    grants.add_argument("--before", default="HEAD", help="git revision of the 'before' template")
    grants.add_argument("--template", type=Path, default=Path("template.yaml"))
    grants.add_argument("--out", type=Path, default=Path("docs/iam-grants.md"))
    args = parser.parse_args(argv)
    if args.command == "report":
        if not args.record.is_file():
            print(f"no record at {args.record}", file=sys.stderr)
            return 2
        return report(args.record)
    old_text = subprocess.run(
        ["git", "show", f"{args.before}:template.yaml"], check=True, capture_output=True, text=True
    ).stdout
    old_path = args.out.parent / ".template-before.yaml"
    old_path.parent.mkdir(parents=True, exist_ok=True)
    old_path.write_text(old_text, encoding="utf-8")
    try:
        before = load_yaml(old_path)
    finally:
        old_path.unlink()
    args.out.write_text(grants_markdown(before, load_yaml(args.template), args.before), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
