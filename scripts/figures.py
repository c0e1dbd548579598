"""Run a command that measures something and write what it prints into a page of the docs.

    python scripts/figures.py PAGE NAME -- COMMAND [ARG ...]

NAME is the make target that runs it (the Makefile's `held`, `matrix`, `demo-output`). The
page holds the figures between two markers, on lines of their own:

    <!-- figures: NAME -->
    ... (replaced) ...
    <!-- end figures: NAME -->

The command's standard output is shown as it runs; when it exits 0 the section becomes a
line saying where and when the figures came from, then the output as a terminal keeps it
(a progress line ended by a carriage return is overwritten by the next) (in a fenced block when
it is not a Markdown table). The repository's path is written as "/…". A failing command
leaves the page as it was and passes its exit status on."""

import datetime
import os
import pathlib
import platform
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def machine():
    """One line: the processor, the cores this process may use, Python."""
    model = platform.processor() or platform.machine()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{model}, {len(os.sched_getaffinity(0))} cores, "
            f"Python {platform.python_version()}")


def section(text, name, body):
    """`text` with the figures section `name` replaced by `body`; ValueError if the page
    has no such section."""
    pattern = re.compile(rf"(<!-- figures: {re.escape(name)} -->\n).*?"
                         rf"(<!-- end figures: {re.escape(name)} -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"no '<!-- figures: {name} -->' … '<!-- end figures: {name} -->'")
    return pattern.sub(lambda m: m[1] + body + m[2], text, count=1)


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    page, name, command = REPO / argv[0], argv[1], argv[3:]
    section(page.read_text(), name, "")              # the section exists: fail early
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE) as process:
        for raw in process.stdout:
            line = raw.decode()
            sys.stdout.write(line)
            sys.stdout.flush()
            kept = line.rsplit("\r", 1)[-1]     # a progress line: what stays on screen
            if kept.strip() or "\r" not in line:
                lines.append(kept)
    if process.returncode != 0:
        return process.returncode
    output = "".join(lines).replace(str(REPO), "/…")
    if not output.lstrip().startswith("|"):
        output = "```\n" + output + "```\n"
    when = datetime.date.today().isoformat()
    body = f"From `make {name}` on {when} ({machine()}):\n\n"
    page.write_text(section(page.read_text(), name, body + output.rstrip("\n") + "\n"))
    print(f"written to {argv[0]} ({name})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
