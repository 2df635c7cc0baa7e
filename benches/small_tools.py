#!/usr/bin/env python3
"""Simple tool tasks for small models through `navi run` (issue 36 item 1).

Runs each task once in a fresh fixture directory against a real
llama-server and prints, per task: whether a tool ran, what it ran, whether
the tool's output held the expected value, and whether the final answer
did. A task is "right" when a tool ran and the final answer holds the
expected value.

    python3 benches/small_tools.py --url http://127.0.0.1:18095/v1 \
        --model /work/llama/SmolLM2-135M-Instruct.Q4_1.gguf [--navi target/debug/navi] \
        [--set tasks|variants|plain] [--small-model auto|on|off]

`--set variants` asks new phrasings on other files (none of them in navi's
example bank); `--set plain` asks questions that need no tool: right there
means no tool ran and an answer came.

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
    for name in ("util.py", "data.json"):
        with open(os.path.join(work, "src", name), "w") as f:
            f.write("{}\n")
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
        ("how many files are in the src directory", "3"),
        ("what is the current directory", "work"),
    ]


def variants(size):
    """New phrasings and files, none of them in navi's example bank."""
    year = str(datetime.date.today().year)
    return [
        ("count the lines of fruits.txt", "3"),
        ("show me what is inside fruits.txt", "cherry"),
        ("what is 123+456? compute it with python", "579"),
        ("which file contains the word lighthouse", "README.md"),
        ("display the last 2 lines of notes.txt", "golf"),
        ("what is the size of the src folder", size),
        ("what date is it today", year),
        ("summarise the most recent commit", "fruit"),
        ("list everything in src", "main.py"),
        ("how many lines does README.md have", "1"),
        ("in which folder are we", "work"),
        ("how many words are in README.md", "7"),
    ]


PLAIN = [
    "what is the capital of France",
    "Name a large river in Germany.",
    "who wrote Hamlet",
    "tell me a short poem about the sea",
    "what is a prime number",
    "how many legs does a spider have",
    "what colour is the sky on a clear day",
    "translate good morning to German",
    "explain what photosynthesis is",
    "what is the opposite of hot",
]


# Pieces of navi's system prompts (lean and full persona).
ECHO = ["You are navi", "Use the terminal tool to look at files", "Tool terminal:",
        "helpful assistant in a terminal"]


def holds(text, want):
    """`want` as a whole word in `text`, status lines ("exit code: 1") aside."""
    text = "\n".join(l for l in text.splitlines() if not l.startswith("exit code:"))
    return re.search(r"(?<!\w)" + re.escape(want) + r"(?!\w)", text, re.I) is not None


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
    ap.add_argument("--set", choices=["tasks", "variants", "plain"], default="tasks",
                    help="plain: questions that need no tool (right = no tool ran)")
    ap.add_argument("--small-model", default="auto", help="[llm].small_model for the runs")
    args = ap.parse_args()
    args.navi = os.path.abspath(args.navi)
    right = 0
    echoes = 0
    rows = []
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "cfg"))
        with open(os.path.join(root, "cfg", "config.toml"), "w") as f:
            f.write(f'[llm]\nsmall_model = "{args.small_model}"\n')
        work, size = fixture(root)
        chosen = {"tasks": tasks(size), "variants": variants(size),
                  "plain": [(q, None) for q in PLAIN]}[args.set]
        for ask, want in chosen:
            cmds, out, answer, took, code, err = run_task(args, root, work, ask)
            ran = bool(cmds)
            if want is None:
                tool_ok, ans_ok = not ran, not ran and bool(answer.strip())
            else:
                tool_ok = holds(out, want)
                ans_ok = ran and holds(answer, want)
            right += ans_ok
            # navi's own prompt read back (issue 36 item 3: goal 0).
            echo = any(p in answer for p in ECHO)
            echoes += echo
            short = re.sub(r"\s+", " ", answer)[:90]
            rows.append((ask, want, ran, cmds, tool_ok, ans_ok, short, took, code))
            print(json.dumps({"task": ask, "want": want, "tool_ran": ran, "calls": cmds,
                              "tool_output_right": tool_ok, "answer_right": ans_ok,
                              "answer": short, "echo": echo, "secs": round(took, 1),
                              "exit": code}),
                  flush=True)
            if code != 0:
                print(err[-400:], flush=True)
    print(f"right: {right}/{len(rows)}; answers with navi's prompt text: {echoes}")


if __name__ == "__main__":
    main()
