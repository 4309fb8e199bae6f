"""Running passbench from the fuzz scripts: which binary, one run with a timeout, the rows of a
gradcheck table, and the gradients `run --grad` prints."""
import json
import os
import re
import subprocess

# The build's binary unless a script's --pb says otherwise (set_binary).
PB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "workbench", "passbench")


def set_binary(path):
    global PB
    PB = path


def run(args, timeout=60):
    """(exit code or "timeout", stdout + stderr)."""
    try:
        p = subprocess.run([PB] + args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


# element (x[3] or w[0, 2]), analytic, numeric, abs err, rel err, status
ROW = re.compile(r"^\s+(\S+\[[^\]]*\]|\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(ok|MISMATCH)\s*$")


def gradcheck_rows(out):
    """{element: (analytic text, numeric text, "ok" or "MISMATCH")} from a gradcheck table."""
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3), m.group(6))
    return rows


def gradients(out, skip=("y",)):
    """{field: gradient list} from `run --grad` JSON output, or None when it is not JSON."""
    try:
        j = json.loads(out)
    except ValueError:
        return None
    return {n: f.get("grad") for n, f in j["fields"].items() if f.get("grad") is not None and n not in skip}
