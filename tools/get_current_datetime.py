"""Example Navi user tool: arguments as JSON on stdin, result on stdout."""
import json
import sys
from datetime import datetime

args = json.load(sys.stdin)
now = datetime.now().astimezone()
fmt = args.get("format")
if fmt:
    try:
        print(now.strftime(fmt))
    except ValueError as e:
        print(f"bad format {fmt!r}: {e}", file=sys.stderr)
        sys.exit(1)
else:
    print(f"{now:%Y-%m-%d %H:%M:%S} {now:%A} ({now.tzname()}, UTC{now:%z})")
