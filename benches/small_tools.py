#!/usr/bin/env python3
"""Simple tool tasks for small models through `navi run` (issue 36 item 1).

Runs each task once in a fresh fixture directory against a real
llama-server and prints, per task: whether a tool ran, what it ran, whether
the tool's output held the expected value, and whether the final answer
did. A task is "right" when a tool ran and the final answer holds the
expected value.

    python3 benches/small_tools.py --url http://127.0.0.1:18095/v1 \
        --model /work/llama/SmolLM2-135M-Instruct.Q4_1.gguf [--navi target/debug/navi]

Start the server with `--jinja`, SmolLM2 with the chatml-tools template and
Gemma 3 with its own (see docs/performance-local.md), `-c 4096 -t 1`.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import tempfile
import time

NOTES = "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\n"
README = "Fixture project. The secret word is lighthouse.\n"


def fixture(root):
    work = os.path.join(root, "work")
    os.makedirs(os.path.join(work, "src"))
    with open(os.path.join(work, "notes.txt"), "w") as f:
        f.write(NOTES)
    with open(os.path.join(work, "README.md"), "w") as f:
        f.write(README)
    with open(os.path.join(work, "fruits.txt"), "w") as f:
        f.write("banana\napple\ncherry\n")
    with open(os.path.join(work, "src", "main.py"), "w") as f:
        f.write("print('hello')\n" * 400)
    git = ["git", "-C", work, "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "add the fruit list"], check=True)
    size = subprocess.run(["du", "-sh", "src"], cwd=work, capture_output=True,
                          text=True).stdout.split()[0]
    return work, size


def tasks(size):
    year = str(datetime.date.today().year)
    return [
        ("list the files in this directory", "notes.txt"),
        ("what does README.md say", "lighthouse"),
        ("how many lines are in notes.txt", "7"),
        ("what is 17*23, use python", "391"),
        ("show the date with the terminal", year),
        ("which files mention the word apple", "fruits.txt"),
        ("how big is the src directory", size),
        ("what is today's date", year),
        ("what does the last git commit say", "fruit"),
        ("print the first 3 lines of notes.txt", "charlie"),
        ("how many files are in the src directory", "1"),
        ("what is the current directory", "work"),
    ]


def run_task(args, root, work, ask):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": root,
        "NAVI_DATA_DIR": os.path.join(root, "data"),
        "NAVI_CONFIG_DIR": os.path.join(root, "cfg"),
        "OPENAI_BASE_URL": args.url,
    }
    cmd = [args.navi, "--backend", "openai", "run", "--no-save", "-m", args.model,
           "--approve", "terminal", "--approve", "code_exec", "--json", ask]
    t0 = time.time()
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                       timeout=args.timeout)
    took = time.time() - t0
    tool_cmds, tool_out, answer = [], "", ""
    for line in p.stdout.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") == "tool_call":
            tool_cmds.append(json.dumps(e.get("args"), separators=(",", ":")))
            tool_out += str(e.get("result", ""))
        elif e.get("type") == "stream_end":
            answer = e.get("content", "")
    return tool_cmds, tool_out, answer, took, p.returncode, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--navi", default="target/debug/navi")
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    args.navi = os.path.abspath(args.navi)
    right = 0
    rows = []
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "cfg"))
        work, size = fixture(root)
        for ask, want in tasks(size):
            cmds, out, answer, took, code, err = run_task(args, root, work, ask)
            ran = bool(cmds)
            tool_ok = want.lower() in out.lower()
            ans_ok = ran and want.lower() in answer.lower()
            right += ans_ok
            short = re.sub(r"\s+", " ", answer)[:90]
            rows.append((ask, want, ran, cmds, tool_ok, ans_ok, short, took, code))
            print(json.dumps({"task": ask, "want": want, "tool_ran": ran, "calls": cmds,
                              "tool_output_right": tool_ok, "answer_right": ans_ok,
                              "answer": short, "secs": round(took, 1), "exit": code}),
                  flush=True)
            if code != 0:
                print(err[-400:], flush=True)
    print(f"right: {right}/{len(rows)}")


if __name__ == "__main__":
    main()
