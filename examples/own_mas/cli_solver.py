"""A ``command:`` program with no SDK at all: the task as JSON on stdin, one HTTP request to the
OpenAI-compatible endpoint named by ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (what masbench sets for
it; no provider key is in its environment), the answer on stdout. Any language works the same way."""

import json
import os
import sys
import urllib.request

task = json.load(sys.stdin)
body = {"model": "default", "temperature": 0.8, "max_tokens": 64, "stop": ["\n\n\n", "Question:"],
        "messages": [{"role": "system", "content": "You are a careful problem solver."},
                     {"role": "user", "content": task["question"]
                      + "\n\nThink step by step, briefly. End with \"Answer: <final answer>\"."}]}
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
                             data=json.dumps(body).encode(), method="POST",
                             headers={"Content-Type": "application/json", "X-Masbench-Agent": "solver",
                                      "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
with urllib.request.urlopen(req, timeout=120) as resp:
    reply = json.load(resp)
print(reply["choices"][0]["message"]["content"])
