#!/usr/bin/env bash
# What a newcomer meets after a run, driven by key scripts on the virtual
# screen (FSWB_NO_DISPLAY): a test run again alone keeps its run's settings
# and says so.
. "$(dirname "$0")/../lib.sh"
unset DISPLAY WAYLAND_DISPLAY
RUNS=$FSWB_HOME/data/runs
mkdir -p "$RUNS"

# Drive fswb tui ARGS... with the key script on stdin, at 80x24, in $T/s.
tui()
{
	rm -rf "$T/s"
	mkdir -p "$T/s"
	cat >"$T/s/keys"
	(cd "$T/s" && LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb FSWB_NO_DISPLAY=1 FSWB_SCREEN=80x24 \
		FSWB_SCRIPT=keys "$FSWB" tui "$@" >stdout 2>stderr)
}

# ---- a test again alone, as in its run (a smoke run: SOAK_DURATION=180) ----
R=20261203-170239
cp -r "$SRCDIR/tests/ui/fixtures/runs/$R" "$RUNS/"
# a kernel tree with nothing in it: the run stops at the kernel, at once
mkdir -p "$T/linux"
python3 - "$RUNS/$R/plan.json" "$T/linux" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["kernel"].update(kind="tree", spec=sys.argv[2])
p["tests"].update(preset="smoke", tests=[])
p["cpus"] = 1
json.dump(p, open(sys.argv[1], "w"))
PY
tui --open "$R" <<'KEYS'
<Home><Down><Down><Down>r
:save-screen again
KEYS
new=$(ls "$RUNS" | grep -vx "$R")
check "again: a run of its own" test -n "$new" -a -f "$RUNS/$new/plan.json"
check "again: the title says the test and the settings kept" \
	grep -qF "ext4/4k · generic/006 alone, settings of smoke" "$T/s/again"
P=$RUNS/$new/plan.json
check "again: the test alone" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
t = p["tests"]
assert t["tests"] == ["generic/006"] and t["preset"] is None and not t["groups"], t
assert t["settings_from"] == "smoke", t
assert p["kernel"]["kind"] == "tree" and p["kernel"]["spec"] == sys.argv[2], p["kernel"]
assert p["cpus"] == 1 and p["configs"] == ["ext4/4k"], p
assert p["fstests_src"], p' "$P" "$T/linux"

done_testing
