#!/usr/bin/env python3
"""A small client for `rab --mode rpc`: sends a prompt, prints the answer as it
streams, and answers permission questions on the terminal.

    python3 examples/rpc_client.py "list the files here"

It talks JSON lines over rab's stdin and stdout: pi's RPC protocol, plus rab's
questions (see docs/rpc.md).
"""
import json
import subprocess
import sys


def main() -> int:
    prompt = " ".join(sys.argv[1:]) or "say hello"
    rab = subprocess.Popen(
        ["rab", "--mode", "rpc"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )

    def send(request: dict) -> None:
        rab.stdin.write(json.dumps(request) + "\n")
        rab.stdin.flush()

    send({"id": 1, "type": "prompt", "message": prompt})
    for line in rab.stdout:
        event = json.loads(line)
        kind = event.get("type")
        if kind == "response" and not event["success"]:
            print(f"\nrab refused {event['command']}: {event['error']}", file=sys.stderr)
            break
        if kind == "message_update":
            step = event["assistantMessageEvent"]
            if step["type"] == "text_delta":
                print(step["delta"], end="", flush=True)
        elif kind == "tool_execution_start":
            print(f"\n[{event['toolName']}] {json.dumps(event['args'])}", flush=True)
        elif kind == "question":
            if event["kind"] == "question":
                answer = input(f"\n{event['question']} ")
                send({"type": "answer", "questionId": event["questionId"], "text": answer})
            else:
                what = event.get("preview") or json.dumps(event["arguments"])
                answer = input(f"\nAllow {event['tool']}? {what}\n[y/N] ")
                decision = "allow" if answer.strip().lower().startswith("y") else "deny"
                send({"type": "answer", "questionId": event["questionId"], "decision": decision})
        elif kind == "agent_end":
            print()
            break
    rab.stdin.close()
    return rab.wait()


if __name__ == "__main__":
    sys.exit(main())
