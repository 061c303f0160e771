#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A Pyroscope ingest endpoint for the export tests (t3200-t3220).

    ingest.py serve DIR [--plan ACTION,...]
        Listen on 127.0.0.1 (a free port, written to DIR/port once
        listening) and record every request: DIR/requests has a line per
        request, "N<TAB>ACTION<TAB>METHOD<TAB>PATH<TAB>CONTENT-TYPE<TAB>BYTES<TAB>
        NAME<TAB>FROM<TAB>UNTIL<TAB>FORMAT<TAB>AUTHORIZATION" (the query decoded),
        DIR/body-N the body and DIR/headers-N the request's headers. The Nth request gets the plan's Nth action
        (the last one repeats; default ok):
            ok        HTTP 200
            500, 503, 400, ...   that status
            hang      read the request, never answer (until killed)
            garbage   answer bytes that are not HTTP, then close
            close     close the connection without a word
        DIR/plan, when it exists, replaces the plan for the requests after
        it was written (one line, the same syntax; the count goes on).
    ingest.py wait DIR COUNT SECONDS
        Wait until DIR/requests has COUNT lines; exit 1 after SECONDS.
"""
import http.server
import os
import socketserver
import sys
import threading
import time
import urllib.parse


def serve(d, plan):
    lock = threading.Lock()
    state = {"n": 0, "plan": plan, "plan_mtime": None}

    def action():
        p = os.path.join(d, "plan")
        try:
            m = os.stat(p).st_mtime_ns
            if m != state["plan_mtime"]:
                state["plan_mtime"] = m
                state["plan"] = open(p).read().strip().split(",")
                # This request is the new plan's first.
                state["base"] = state["n"] - 1
        except FileNotFoundError:
            pass
        i = state["n"] - 1 - state.get("base", 0)
        pl = state["plan"] or ["ok"]
        return pl[min(i, len(pl) - 1)]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def do_POST(self):
            n_bytes = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n_bytes) if n_bytes else b""
            with lock:
                state["n"] += 1
                n = state["n"]
                act = action()
                q = urllib.parse.urlsplit(self.path)
                args = urllib.parse.parse_qs(q.query)
                get = lambda k: args.get(k, [""])[0]
                with open(os.path.join(d, "body-%d" % n), "wb") as f:
                    f.write(body)
                with open(os.path.join(d, "headers-%d" % n), "w") as f:
                    f.write(str(self.headers))
                line = "\t".join(str(x) for x in (
                    n, act, self.command, q.path, self.headers.get("Content-Type", ""),
                    len(body), get("name"), get("from"), get("until"), get("format"),
                    self.headers.get("Authorization", "")))
                with open(os.path.join(d, "requests"), "a") as f:
                    f.write(line + "\n")
            if act == "hang":
                while True:
                    time.sleep(3600)
            if act == "garbage":
                self.wfile.write(b"\x00\x01garbage, not HTTP\r\n\r\n\xff\xfe")
                self.wfile.flush()
                self.close_connection = True
                return
            if act == "close":
                self.close_connection = True
                return
            code = 200 if act == "ok" else int(act)
            msg = b"ok\n" if code == 200 else b"planned failure\n"
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)

        do_GET = do_POST

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    srv = Server(("127.0.0.1", 0), Handler)
    open(os.path.join(d, "requests"), "a").close()
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
    srv.serve_forever()


def wait(d, count, seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            if sum(1 for _ in open(os.path.join(d, "requests"))) >= count:
                return 0
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    return 1


def main(argv):
    if len(argv) >= 3 and argv[1] == "serve":
        plan = []
        if len(argv) == 5 and argv[3] == "--plan":
            plan = argv[4].split(",")
        os.makedirs(argv[2], exist_ok=True)
        serve(argv[2], plan)
        return 0
    if len(argv) == 5 and argv[1] == "wait":
        return wait(argv[2], int(argv[3]), float(argv[4]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
