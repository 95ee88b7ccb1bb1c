#!/usr/bin/env python3
"""Drives a real headless Chromium over the DevTools protocol (on a pipe, --remote-debugging-pipe)
for the web group chat's tests: opens a page, then runs steps a person would take, expressed as
JavaScript in the page, and prints what it found as JSON. Not a browser of its own: every step
runs in Chromium's real DOM, layout and network stack.

usage: drive.py BROWSER URL STEPS.json

STEPS.json is a list of steps, each one of:
  {"do": "JS"}                      evaluate once (awaiting a promise); the value is recorded
  {"wait": "JS", "timeout": 60}     evaluate every 100 ms until truthy; fail after timeout seconds
  {"screenshot": "PATH"}            write a PNG of the viewport
  {"html": true}                    record document.documentElement.outerHTML
  {"viewport": [WIDTH, HEIGHT]}     resize the viewport (a phone: [390, 844])
  {"append": "PATH", "text": "…"}   append text to a file, as a person's editor would, while the page is open
Prints {"results": [...]} (one entry per step) and exits 0, or prints {"error": "...",
"results": [...]} and exits 1 at the first step that fails.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time

browser, url, steps_file = sys.argv[1], sys.argv[2], sys.argv[3]
steps = json.load(open(steps_file))

to_browser_r, to_browser_w = os.pipe()
from_browser_r, from_browser_w = os.pipe()


def wire_fds():
    os.dup2(to_browser_r, 3)
    os.dup2(from_browser_w, 4)


profile = tempfile.mkdtemp(prefix="relay-web-test-")
process = subprocess.Popen(
    [browser, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
     "--disable-extensions", "--hide-scrollbars", "--user-data-dir=" + profile, "about:blank"],
    pass_fds=(3, 4), preexec_fn=wire_fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(to_browser_r)
os.close(from_browser_w)
buffer = b""
next_id = 0


def send(method, params=None, session=None):
    global next_id, buffer
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    os.write(to_browser_w, json.dumps(message).encode() + b"\0")
    while True:
        while b"\0" not in buffer:
            chunk = os.read(from_browser_r, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed the DevTools pipe")
            buffer += chunk
        raw, buffer = buffer.split(b"\0", 1)
        reply = json.loads(raw)
        if reply.get("id") == next_id:
            if "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            return reply.get("result", {})


def evaluate(session, expression):
    result = send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session)
    if "exceptionDetails" in result:
        raise RuntimeError("the page threw: " + json.dumps(result["exceptionDetails"].get("exception", result["exceptionDetails"]))[:500])
    return result.get("result", {}).get("value")


results = []
try:
    target = send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    send("Page.enable", session=session)
    send("Emulation.setDeviceMetricsOverride", {"width": 1100, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session)
    send("Page.navigate", {"url": url}, session)
    deadline = time.time() + 30
    while evaluate(session, "document.readyState") != "complete":
        if time.time() > deadline:
            raise RuntimeError("the page did not load")
        time.sleep(0.05)
    for step in steps:
        if "do" in step:
            results.append(evaluate(session, step["do"]))
        elif "wait" in step:
            deadline = time.time() + step.get("timeout", 60)
            while True:
                try:
                    value = evaluate(session, step["wait"])
                except RuntimeError:
                    value = None  # the page is navigating (a reload): ask again
                if value:
                    results.append(value)
                    break
                if time.time() > deadline:
                    raise RuntimeError(f"waited {step.get('timeout', 60)} s for: {step['wait']}")
                time.sleep(0.1)
        elif "screenshot" in step:
            data = send("Page.captureScreenshot", {"format": "png"}, session)["data"]
            with open(step["screenshot"], "wb") as file:
                file.write(base64.b64decode(data))
            results.append(step["screenshot"])
        elif "viewport" in step:
            width, height = step["viewport"]
            send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}, session)
            results.append(True)
        elif "append" in step:
            with open(step["append"], "a") as file:
                file.write(step["text"])
            results.append(True)
        elif "html" in step:
            results.append(evaluate(session, "document.documentElement.outerHTML"))
    print(json.dumps({"results": results}))
    code = 0
except Exception as error:  # the test shows the message and the results so far
    print(json.dumps({"error": str(error), "results": results}))
    code = 1
finally:
    process.kill()
    process.wait()
sys.exit(code)
