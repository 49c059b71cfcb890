# SPDX-License-Identifier: MIT
"""tests/lib/junit_tap.py JUNIT LOG RC: pytest's JUnit XML as TAP, one line a
test (t_python.sh and t_torch.sh run pytest through it). A failure prints its
message and traceback's last lines as # comments; a skip is `ok # SKIP`; an
xfail (a known gap, named) is `not ok # TODO`, which does not fail the run.
A pytest that did not run (no XML, an exit other than 0/1, exit 1 with no
failure, no test) adds a failing line with the log's tail. Exits 1 if any
line failed."""
import sys
import xml.etree.ElementTree as ET


def main(path, log, rc):
    def tail(n=40):
        try:
            return open(log, errors="replace").read().splitlines()[-n:]
        except OSError:
            return []

    try:
        cases = list(ET.parse(path).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        cases = None
    n = failed = 0
    for c in cases or []:
        n += 1
        name = "%s::%s" % (c.get("classname", "").rsplit(".", 1)[-1], c.get("name"))
        bad = c.find("failure") if c.find("failure") is not None else c.find("error")
        skip = c.find("skipped")
        if bad is not None:
            failed += 1
            print("not ok %d - %s" % (n, name))
            for line in ((bad.get("message") or "") + "\n" + (bad.text or "")).strip().splitlines()[-20:]:
                print("#   " + line)
        elif skip is not None:
            if skip.get("type") == "pytest.xfail":
                print("not ok %d - %s # TODO %s" % (n, name, ((skip.get("message") or "").splitlines() or [""])[0][:200]))
            else:
                print("ok %d # SKIP %s: %s" % (n, name, skip.get("message", "")))
        else:
            print("ok %d - %s" % (n, name))
    if cases is None or rc not in (0, 1) or (rc == 1 and failed == 0) or n == 0:
        failed += 1
        n += 1
        print("not ok %d - pytest ran (exit %d)" % (n, rc))
        for line in tail():
            print("#   " + line)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
