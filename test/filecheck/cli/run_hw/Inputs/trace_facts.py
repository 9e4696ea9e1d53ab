"""Prints the tracks and the core-0 slices (in the trace's order: program order)
of a Chrome trace, and whether a file is a PNG (trace.mlir)."""

import json
import os
import sys
from pathlib import Path

trace = json.loads(Path(sys.argv[1]).read_text())
events = trace["traceEvents"] if isinstance(trace, dict) else trace
names = {
    (e["pid"], e["tid"]): e["args"]["name"]
    for e in events
    if e.get("ph") == "M" and e.get("name") == "thread_name"
}
slices = [e for e in events if e.get("ph") == "X"]
print("processes:", " ".join(sorted({str(e["pid"]) for e in slices})))
tracks = sorted({names[(e["pid"], e["tid"])] for e in slices if e["pid"] == 0})
print("tracks of core 0:", " ".join(tracks))
for e in (e for e in slices if e["pid"] == 0):
    loc = os.path.basename(e["args"]["loc"])
    size = f" {e['args']['bytes']} B" if e["args"].get("bytes") else ""
    print(f"{e['name']} {names[(e['pid'], e['tid'])]} {loc}{size}")
print("png:", Path(sys.argv[2]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n")
