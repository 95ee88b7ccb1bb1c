#!/usr/bin/env python3
"""Drives a real headless Chromium over the DevTools protocol (on a pipe, --remote-debugging-pipe)
for the web group chat's tests: opens a page, then runs steps a person would take, expressed as
JavaScript in the page, and prints what it found as JSON. Not a browser of its own: every step
runs in Chromium's real DOM, layout and network stack.

usage: drive.py BROWSER URL STEPS.json

STEPS.json is a list of steps, each one of:
  {"do": "JS"}                      evaluate once (awaiting a promise); the value is recorded
  {"wait": "JS", "timeout": 60}     wait until truthy: evaluated again at each change of the page (a DOM
                                    mutation, readystatechange, hashchange, load, resize), not on a timer;
                                    a reload starts the wait again in the new page; the timeout is a
                                    guard against a hang (the step fails), never a measure
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
import signal
import subprocess
import sys
import tempfile

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


# A promise in the page that resolves with the condition's value once it is truthy, looking
# again at each change of the page; the guard timer rejects it with a mark the driver knows.
WAITER = """new Promise((resolve, reject) => {
  let done = false;
  const finish = (value) => { if (done) return; done = true; observer.disconnect(); clearTimeout(guard); resolve(value); };
  const check = () => { let value; try { value = (CONDITION); } catch (error) { value = undefined; } if (value) finish(value); };
  // A change is looked at in the page's next task, not in the observer's microtask: a condition
  // that changes the page itself (typing into the composer) must let the page's network and
  // timers run between two looks.
  let queued = false;
  const later = () => { if (!queued && !done) { queued = true; setTimeout(() => { queued = false; if (!done) check(); }, 0); } };
  const observer = new MutationObserver(later);
  observer.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
  for (const name of ['readystatechange', 'DOMContentLoaded']) document.addEventListener(name, later);
  for (const name of ['load', 'hashchange', 'popstate', 'resize']) window.addEventListener(name, later);
  const guard = setTimeout(() => { if (!done) { done = true; observer.disconnect(); reject(new Error('relay-wait-guard')); } }, GUARD);
  check();
})"""


def wait_for(session, condition, timeout):
    """The condition's first truthy value. A reload destroys the page's promise: the wait starts
    again in the new page (a bounded number of times, so a condition that throws is not retried
    for ever)."""
    expression = WAITER.replace("CONDITION", condition).replace("GUARD", str(int(timeout * 1000)))
    # The page's own guard cannot fire in a page that hangs: the driver keeps one too.
    def hung(*_):
        raise RuntimeError(f"the page hung while waiting for: {condition}")
    signal.signal(signal.SIGALRM, hung)
    signal.alarm(int(timeout) + 30)
    try:
        for _ in range(20):
            try:
                return evaluate(session, expression)
            except RuntimeError as error:
                if "the page hung" in str(error):
                    raise
                if "relay-wait-guard" in str(error):
                    raise RuntimeError(f"waited {timeout} s for: {condition}")
                # Otherwise the page navigated (a reload) and took the promise with it: wait again.
        raise RuntimeError(f"the page kept going away while waiting for: {condition}")
    finally:
        signal.alarm(0)


results = []
try:
    target = send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    send("Page.enable", session=session)
    send("Emulation.setDeviceMetricsOverride", {"width": 1100, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session)
    send("Page.navigate", {"url": url}, session)
    wait_for(session, "document.readyState === 'complete'", 30)
    for step in steps:
        if "do" in step:
            results.append(evaluate(session, step["do"]))
        elif "wait" in step:
            results.append(wait_for(session, step["wait"], step.get("timeout", 60)))
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
