#!/usr/bin/env bash
# The workbench without a terminal: each key script in tests/ui/screens/
# drives the real binary on a virtual screen (FSWB_NO_DISPLAY) at 80x24 and
# at 200x60, and each screen it saves must match its expected screen,
# tests/ui/screens/NAME.COLSxROWS (see screencmp for the wildcards).
#
#   FSWB_UPDATE_SCREENS=1 tests/ui/screens.sh   writes the expected screens
#                                               that do not exist yet
. "$(dirname "$0")/../lib.sh"
DIR=$SRCDIR/tests/ui/screens
MINI=$SRCDIR/tests/fixtures/mini-fstests
mkdir -p "$FSWB_HOME/data/runs"
cp -r "$SRCDIR/tests/ui/fixtures/runs/"* "$FSWB_HOME/data/runs/"
unset DISPLAY WAYLAND_DISPLAY
# a run cut off in the middle of a test: its events up to generic/006's start
CUTOFF=$T/cutoff
cp -r "$SRCDIR/tests/ui/fixtures/runs/20261203-170239" "$CUTOFF"
rm "$CUTOFF/run.json" "$CUTOFF/junit.xml"
sed '/"test_start".*"generic\/006"/q' "$SRCDIR/tests/ui/fixtures/runs/20261203-170239/events.jsonl" \
	>"$CUTOFF/events.jsonl"

# What the screens say of KVM must not depend on this host's /dev/kvm: fswb
# looks for KVM at FSWB_KVM_DEV, here /dev/null (not KVM), as on a host
# without virtualisation, root or not.
export FSWB_KVM_DEV=/dev/null
# Nor on its installed kernels: the screens see one of their own.
mkdir -p "$T/boot"
: >"$T/boot/vmlinuz-9.9.9-fswbtest"
export FSWB_BOOT_DIR=$T/boot

for keys in "$DIR"/*.keys; do
	name=$(basename "$keys" .keys)
	read -ra args <<<"$(sed -n "s|@CUTOFF@|$CUTOFF|; s|@FIXTURES@|$SRCDIR/tests/ui/fixtures|; s/^# args: //p" "$keys")"
	read -ra envs <<<"$(sed -n 's/^# env: //p' "$keys")"
	for size in 80x24 200x60; do
		out=$T/screens/$name.$size
		mkdir -p "$out"
		sed "s|@MINI@|$MINI|g" "$keys" >"$out/keys"
		rm -rf "$FSWB_HOME/config"
		if ! (cd "$out" && env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb "${envs[@]}" \
			FSWB_NO_DISPLAY=1 FSWB_SCREEN="$size" FSWB_SCRIPT=keys \
			"$FSWB" tui "${args[@]}" >stdout 2>stderr); then
			fail "$name at $size: the script ran" "$(cat "$out/stderr")"
			continue
		fi
		for screen in $(sed -n 's/^:save-screen //p' "$keys"); do
			exp=$DIR/$screen.$size
			if [ ! -f "$out/$screen" ]; then
				fail "$screen at $size" "the script did not save '$screen'"
			elif [ ! -f "$exp" ] && [ -n "${FSWB_UPDATE_SCREENS:-}" ]; then
				cp "$out/$screen" "$exp"
				skip "$screen at $size" "wrote $exp"
			elif [ ! -f "$exp" ]; then
				fail "$screen at $size" "no expected screen '$exp': FSWB_UPDATE_SCREENS=1 writes it"
			else
				check "$screen at $size" "$SRCDIR/tests/ui/screencmp" "$exp" "$out/$screen"
			fi
		done
	done
done

# the comparison itself tells a changed screen, and a wildcard is no catch-all
sed 's/step 1 of 6/step 2 of 6/' "$T/screens/wizard.80x24/welcome" >"$T/changed"
check "a changed screen does not match" bash -c "! '$SRCDIR/tests/ui/screencmp' '$DIR/welcome.80x24' '$T/changed' >/dev/null"
head -n 5 "$T/screens/wizard.80x24/welcome" >"$T/short"
check "a cut screen does not match" bash -c "! '$SRCDIR/tests/ui/screencmp' '$DIR/welcome.80x24' '$T/short' >/dev/null"

# bad input is named: the script's line, the size, a missing script
printf '%s\n' '<Enter>' '<Nope>' >"$T/bad.keys"
out=$(cd "$T" && FSWB_NO_DISPLAY=1 FSWB_SCRIPT=bad.keys "$FSWB" 2>&1)
check "an unknown key: exit 2" test $? -eq 2
check "an unknown key: its line named" grep -qF "bad.keys:2: unknown key '<Nope>'" <<<"$out"
printf ':save-screen\n' >"$T/bad2.keys"
out=$(cd "$T" && FSWB_NO_DISPLAY=1 FSWB_SCRIPT=bad2.keys "$FSWB" 2>&1)
check "a command without its file: named" grep -qF "bad2.keys:1: ':save-screen' is not a script command" <<<"$out"
out=$(FSWB_NO_DISPLAY=1 FSWB_SCREEN=80by24 FSWB_SCRIPT="$T/bad.keys" "$FSWB" 2>&1)
check "a bad FSWB_SCREEN: named" grep -qF "FSWB_SCREEN: '80by24' is not a screen size" <<<"$out"
out=$(FSWB_NO_DISPLAY=1 "$FSWB" tui 2>&1)
check "no script: said" grep -qF "FSWB_SCRIPT is not" <<<"$out"
done_testing
