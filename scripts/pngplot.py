"""pngplot.py - a gnuplot script drawn into a PNG, for the plotting
scripts that read a tool's text output (scripts/g2p-attention-plot,
scripts/vc-schedule-plot; a module, not a command): gnuplot's quoting of
a label, and the run of gnuplot -c SCRIPT TMP with the PNG renamed into
place, gnuplot's messages on stderr prefixed with the script's name.
Failures exit 1 with "PROG: message"."""
import os
import shutil
import subprocess
import sys


def die(prog, msg):
    sys.stderr.write("%s: %s\n" % (prog, msg))
    sys.exit(1)


def quote(s):
    """s as a gnuplot double-quoted string, backslash and quote escaped
    (in a tic label gnuplot drops a single-quoted string's '')."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(prog, script, png):
    """Run gnuplot on script (its output file is ARG1) and put the PNG at
    png through a temporary; exit 1 if gnuplot is missing or fails."""
    if shutil.which("gnuplot") is None:
        die(prog, "gnuplot not found (Debian package gnuplot-nox; scripts/install-deps installs it)")
    tmp, gp = png + ".tmp.png", png + ".tmp.gp"
    try:
        with open(gp, "w", encoding="utf-8") as f:
            f.write(script)
        r = subprocess.run(["gnuplot", "-c", gp, tmp], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, encoding="utf-8", errors="replace")
        for l in r.stdout.splitlines():
            sys.stderr.write("%s: gnuplot: %s\n" % (prog, l))
        if r.returncode != 0:
            die(prog, "%s: gnuplot failed" % png)
        if not os.path.exists(tmp) or os.path.getsize(tmp) == 0:
            die(prog, "%s: gnuplot wrote nothing" % png)
        os.replace(tmp, png)
    except OSError as e:
        die(prog, "%s: %s" % (png, e.strerror))
    finally:
        for f in (tmp, gp):
            if os.path.exists(f):
                os.remove(f)
