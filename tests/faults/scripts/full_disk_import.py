"""Run inside a private mount namespace on a small tmpfs (tests/faults/test_full_disk.py): an import that fits,
then the disk filled up but SLACK bytes, then a second import; prints what the --out folder holds as JSON.

    python full_disk_import.py MOUNTED_DIR DUMP SLACK
"""

import json
import os
import subprocess
import sys
from pathlib import Path

d, dump, slack = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
runs = d / "runs"


def airctl(*args: str) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "airctl", *args], capture_output=True, text=True, check=False)
    return p.returncode, p.stderr



c1, e1 = airctl("import", dump, "--out", str(runs), "--no-report")
first = (runs / "latest").read_text().strip()
fd = os.open(d / "filler", os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"x" * 4096)
except OSError:
    pass
os.close(fd)
os.truncate(d / "filler", max(0, os.path.getsize(d / "filler") - slack))
c2, e2 = airctl("import", dump, "--out", str(runs), "--no-report")
latest = (runs / "latest").read_text().strip() if (runs / "latest").exists() else None
statuses = {}
for p in runs.iterdir():
    if (p / "index.json").is_file():
        try:
            statuses[p.name] = json.loads((p / "index.json").read_text()).get("status")
        except ValueError:
            statuses[p.name] = "corrupt"
tmps = [str(p.relative_to(runs)) for p in runs.rglob("*") if p.name.endswith(".tmp")]
folders = sorted(p.name for p in runs.iterdir() if p.is_dir())
print(json.dumps({"c1": c1, "c2": c2, "e2": e2[-300:], "first": first, "latest": latest, "statuses": statuses,
                  "tmps": tmps, "folders": folders}))
