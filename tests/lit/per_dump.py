#!/usr/bin/env python3
"""per_dump.py PASSBENCH SUBCOMMAND ... FILE.chi ...: runs the command once per kernel dump of
FILE.chi (`passbench dumps` counts them), appending `--dump=N`, one after the other. Standard
output and error are the commands' own; the exit status is the first nonzero one (every dump still
runs), so a test file can hold one case per kernel."""
import os
import subprocess
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: per_dump.py PASSBENCH SUBCOMMAND ... FILE.chi ...")
    files = [a for a in argv[2:] if a.endswith(".chi") and os.path.isfile(a)]
    if len(files) != 1:
        sys.exit("per_dump.py: the command must name exactly one existing .chi file, got %r" % files)
    listing = subprocess.run([argv[0], "dumps", files[0]], capture_output=True, text=True)
    if listing.returncode != 0:
        sys.stderr.write(listing.stderr)
        return listing.returncode
    count = sum(1 for line in listing.stdout.splitlines() if line.strip())
    status = 0
    for n in range(1, count + 1):
        sys.stdout.flush()
        rc = subprocess.call(argv + ["--dump=%d" % n])
        if rc != 0 and status == 0:
            status = rc
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
