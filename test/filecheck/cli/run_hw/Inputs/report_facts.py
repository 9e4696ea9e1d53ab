"""Prints facts of the JSON reports given on the command line (json.mlir): key names, bytes, which pipes work."""

import json
import sys
from pathlib import Path

single, double, matmul = (json.loads(Path(p).read_text()) for p in sys.argv[1:])
print("keys:", " ".join(sorted(single)))
print("pipes:", " ".join(sorted(single["pipes"])))
for name, report in (("single", single), ("double", double)):
    print(
        f"{name}: {report['block_dim']} cores, read {report['gm_bytes_read']}, "
        f"written {report['gm_bytes_written']}"
    )
print("double buffering is faster:", double["cycles"] < single["cycles"])
print(
    f"matmul: {len(matmul['cores'])} cores, read {matmul['gm_bytes_read']}, "
    f"written {matmul['gm_bytes_written']}, paths {' '.join(sorted(matmul['bytes_per_path']))}"
)
busy = [p for p, s in sorted(matmul["pipes"].items()) if s["busy_cycles"] > 0]
print("matmul pipes busy:", " ".join(busy))
