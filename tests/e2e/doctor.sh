#!/usr/bin/env bash
# fswb doctor on this host: it passes here with the real PATH (the default
# local QEMU path can work), and fails with the fix when QEMU is not in PATH;
# its options, its exit codes and its JSON.
. "$(dirname "$0")/../lib.sh"

# a missing command is a failure of this fswb, not a reason to skip
if ! "$FSWB" doctor --help >/dev/null 2>&1; then
	fail "fswb doctor --help" "this fswb has no working 'doctor' command"
	done_testing
	exit
fi

help=$("$FSWB" doctor --help)
check "--help names --json" grep -q -- '--json' <<<"$help"

"$FSWB" doctor --jsn >"$T/err" 2>&1
rc=$?
check "a bad option exits 2" test "$rc" -eq 2
check "a bad option suggests --json" grep -q "did you mean '--json'" "$T/err"
"$FSWB" doctor extra >"$T/err" 2>&1
rc=$?
check "an argument exits 2" test "$rc" -eq 2

# The install command this distribution uses.
. /etc/os-release
case " ${ID:-} ${ID_LIKE:-} " in
*" debian "* | *" ubuntu "*) install="sudo apt-get install" qemu_pkg=qemu-system-x86 ;;
*" fedora "* | *" rhel "*) install="sudo dnf install" qemu_pkg=qemu-system-x86 ;;
*) install="" qemu_pkg=qemu-system-x86 ;;
esac

# The real host: everything fswb run needs is installed here.
"$FSWB" doctor >"$T/out" 2>&1
rc=$?
check "doctor exits 0 here" test "$rc" -eq 0
check "qemu-system-x86_64 is ok with its version" \
	grep -qE '^  ok +qemu-system-x86_64  [0-9]+\.[0-9]+' "$T/out"
check "qemu-img is ok" grep -qE '^  ok +qemu-img  ' "$T/out"
check "mkfs.ext4 is ok" grep -qE '^  ok +mkfs\.ext4  ' "$T/out"
check "the kernel is found" grep -qE '^  ok +kernel  ' "$T/out"
check "the appliance can be built" grep -qE '^  ok +appliance build  ' "$T/out"
check "KVM gets a verdict" grep -qE '^  (ok|WARN) +KVM  ' "$T/out"
if grep -qE '^  WARN +KVM' "$T/out"; then
	check "no KVM says emulation and why" \
		grep -qE 'no KVM: guests run under emulation \(TCG\), several times slower: .+' "$T/out"
fi
# only the backends this fswb has: none that does not exist is MISSING
check "the ssh group only says how to name a machine" \
	grep -qE '^  ok +test machine  none named here; fswb doctor --backend ssh' "$T/out"
check "the libvirt group says its default URI is not used here, with why" \
	grep -qE '^  ok +libvirt  (not used here \(only --backend libvirt needs it\): .*not running|.*not tried)' "$T/out"
check "the gce group asks no cloud unless a project is named" \
	grep -qE '^  ok +project  none named here; fswb doctor --backend gce -o key=FILE' "$T/out"
check "the adb group looks at no device unless asked" \
	grep -qE '^  ok +devices  not looked at; fswb doctor --backend adb' "$T/out"
check "the closing line says fswb run can work" grep -q '^fswb run can work here' "$T/out"
[ "$rc" -eq 0 ] || cat "$T/out" | sed 's/^/# /'

# A PATH without QEMU: a scratch bin of symlinks to everything else.
mkdir -p "$T/bin"
for d in /usr/local/bin /usr/bin /bin; do
	[ -d "$d" ] || continue
	for f in "$d"/*; do
		n=${f##*/}
		case $n in qemu-system-* | qemu-img) continue ;; esac
		[ -e "$T/bin/$n" ] || ln -s "$f" "$T/bin/$n"
	done
done
PATH=$T/bin "$FSWB" doctor >"$T/noqemu" 2>&1
rc=$?
check "without QEMU doctor exits 1" test "$rc" -eq 1
check "without QEMU qemu-system-x86_64 is MISSING" \
	grep -qE '^  MISSING +qemu-system-x86_64  ' "$T/noqemu"
if [ -n "$install" ]; then
	check "the fix is the install command" \
		grep -qE "^  MISSING +qemu-system-x86_64  .*fix: $install $qemu_pkg\$" "$T/noqemu"
fi
check "without QEMU the closing line says it cannot work" \
	grep -q '^fswb run cannot work here yet' "$T/noqemu"
check "the rest is still checked" grep -qE '^  ok +mkfs\.ext4  ' "$T/noqemu"

# JSON: the same findings.
PATH=$T/bin "$FSWB" doctor --json >"$T/json" 2>"$T/err"
rc=$?
check "--json without QEMU exits 1" test "$rc" -eq 1
if command -v jq >/dev/null; then
	check "--json is JSON with ready false" jq -e '.ready == false' "$T/json"
	check "--json has the host and the backends of this fswb" \
		jq -e '[.groups[].name] == ["host","qemu","libvirt","gce","ssh","adb"]' "$T/json"
	check "--json marks qemu-system-x86_64 missing and required" \
		jq -e '.groups[1].findings[] | select(.name == "qemu-system-x86_64") |
			.state == "MISSING" and .required and (.fix | length > 0)' "$T/json"
else
	skip "--json checks" "jq is not installed"
fi

# What a killed fswb left (a lease whose owner is gone: its guest directory)
# is listed, with the directory, and so is what a running fswb holds.
mkdir -p "$FSWB_HOME/data/leases" "$FSWB_HOME/data/runs/20261203-120000/guest-ext4-4k"
sh -c 'exit 0' &
gone=$!
wait "$gone"
printf 'backend qemu\nowner %s 12345\npath %s\n' "$gone" \
	"$FSWB_HOME/data/runs/20261203-120000/guest-ext4-4k" >"$FSWB_HOME/data/leases/qemu-$gone-1"
"$FSWB" doctor >"$T/leases" 2>&1
check "doctor lists what a killed fswb left" \
	grep -qE "^  qemu: left by an fswb that is gone \(pid $gone\), path .*/guest-ext4-4k" "$T/leases"
if command -v jq >/dev/null; then
	"$FSWB" doctor --json 2>/dev/null >"$T/leases.json"
	check "--json lists it under leases" \
		jq -e --arg p "$gone" '.leases | map(select(contains("pid " + $p))) | length == 1' "$T/leases.json"
fi
check "doctor only lists it: the directory is still there" \
	test -d "$FSWB_HOME/data/runs/20261203-120000/guest-ext4-4k"

done_testing
