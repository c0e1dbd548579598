"""Write test/data/rosdistro.yaml: the entries of a ros/rosdistro checkout that resolve the
dependency keys of this repository's package.xml files (test_package.py resolves each key
against it, without a network).

    python scripts/rosdistro_snapshot.py ROSDISTRO_GIT_DIRECTORY [DATE]

A key resolves when rosdep/base.yaml or rosdep/python.yaml defines it (the Ubuntu rule is
kept), or when a distribution's distribution.yaml releases a package of that name (its
repository is kept), for Kilted and Jazzy.
"""

import pathlib
import re
import subprocess
import sys

import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent
MANIFESTS = [REPO / "package.xml", REPO / "interfaces/robo_dynamics_interfaces/package.xml"]
DISTRIBUTIONS = ("kilted", "jazzy")
OWN = {"robo_dynamics_interfaces"}          # built from this repository


def keys():
    found = set()
    for path in MANIFESTS:
        found |= set(re.findall(r"<(?:\w+_)?depend>([^<]+)</", path.read_text()))
    return sorted(found - OWN)


def released(distribution):
    """{package: repository} of a distribution.yaml."""
    out = {}
    for repository, info in distribution["repositories"].items():
        release = info.get("release")
        if release:
            for package in release.get("packages", [repository]):
                out[package] = repository
    return out


def git(checkout, *args):
    return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True,
                          check=True).stdout


def main(checkout, date):
    rules = {}
    for name in ("base.yaml", "python.yaml"):
        rules.update(yaml.safe_load(git(checkout, "show", f"HEAD:rosdep/{name}")))
    packages = {d: released(yaml.safe_load(git(checkout, "show", f"HEAD:{d}/distribution.yaml")))
                for d in DISTRIBUTIONS}
    commit = git(checkout, "log", "-1", "--format=%H %cs").split()
    snapshot = {"taken": date, "rosdistro_commit": commit[0], "commit_date": commit[1],
                "rosdep": {}, "packages": {d: {} for d in DISTRIBUTIONS}}
    for key in keys():
        if key in rules:
            snapshot["rosdep"][key] = {"ubuntu": rules[key].get("ubuntu")}
        for d in DISTRIBUTIONS:
            if key in packages[d]:
                snapshot["packages"][d][key] = packages[d][key]
    out = REPO / "test" / "data" / "rosdistro.yaml"
    out.write_text("# written by scripts/rosdistro_snapshot.py: only the entries this "
                   "repository's package.xml keys need\n" + yaml.safe_dump(snapshot))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
