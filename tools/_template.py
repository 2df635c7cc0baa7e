"""Template for a Navi user tool (files starting with _ are not loaded).

Copy to <config dir>/tools/my_tool.py together with my_tool.json, or let the
agent write one with write_tool. Arguments arrive as JSON on stdin; print the
result on stdout; exit non-zero with a message on stderr when something fails.
"""
import json
import sys

args = json.load(sys.stdin)
text = args.get("text")
if not isinstance(text, str):
    print("argument 'text' must be a string", file=sys.stderr)
    sys.exit(2)
print(text)
