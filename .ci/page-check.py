#!/usr/bin/env python3
"""Opens the web example (examples/web/) in headless Chromium through WebDriver and checks
that it reports a verified GEMM, as a person would see it.

    page-check.py DRIVER_URL PAGE_URL SCREENSHOT.png

DRIVER_URL is a running chromedriver (http://127.0.0.1:PORT), PAGE_URL the page served on
this machine. Speaks the W3C WebDriver protocol with the standard library only; saves a
screenshot; prints what the page shows; exits non-zero unless the page says "verified"
within the time limit. Its last line counts into CI's closing line.
"""
import base64
import json
import sys
import time
import urllib.request

TIMEOUT_S = 240


def call(driver, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        driver + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())["value"]


def main():
    driver, page, screenshot = sys.argv[1:4]
    capabilities = {
        "capabilities": {
            "alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "args": [
                        "--headless=new",
                        "--no-sandbox",
                        "--enable-unsafe-webgpu",
                        "--window-size=1000,800",
                    ]
                },
            }
        }
    }
    session = call(driver, "POST", "/session", capabilities)["sessionId"]
    base = f"/session/{session}"
    state, shown = "none", {}
    try:
        call(driver, "POST", base + "/url", {"url": page})
        deadline = time.time() + TIMEOUT_S
        script = (
            "const s = document.getElementById('status');"
            "const cells = {};"
            "for (const td of document.querySelectorAll('td')) cells[td.id] = td.textContent;"
            "return [s.dataset.state, s.textContent, cells];"
        )
        while time.time() < deadline:
            state, text, shown = call(driver, "POST", base + "/execute/sync", {"script": script, "args": []})
            if state in ("verified", "failed", "error"):
                break
            time.sleep(1)
        png = base64.b64decode(call(driver, "GET", base + "/screenshot"))
        with open(screenshot, "wb") as f:
            f.write(png)
        print(f"page status: {state}: {text}")
        for key, value in shown.items():
            print(f"page {key}: {value}")
        print(f"page screenshot: {screenshot} ({len(png)} bytes)")
    finally:
        call(driver, "DELETE", base)
    if state != "verified":
        print("page check: 0 passed, 1 failed")
        sys.exit(1)
    print("page check: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
