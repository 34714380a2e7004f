#!/usr/bin/env bash
# A full kernel build through 'fswb kernel build': Debian's linux-source-6.1
# with the fstests config (x86_64_defconfig + kvm_guest.config + fstests.config
# + the ext4, xfs, btrfs and f2fs fragments). Prints the wall time, the
# bzImage's size, the objects compiled against fswb's estimate, and the time
# of a rebuild with nothing changed.
#
# Slow: 30 to 60 minutes on two cores. It starts from an empty build
# directory in $KBUILD_BENCH_HOME (default /var/tmp/fswb-bench-kbuild, kept
# afterwards for a look at the log).
#   KBUILD_BENCH_CONFIGS=ext4/4k     other filesystem configurations
#   KBUILD_BENCH_JOBS=N              make -jN (default: the CPUs)
#   KBUILD_BENCH_NICE=N              make runs under nice -n N (default 10)
#   KBUILD_BASELINE=1                also build plain x86_64_defconfig with make
#                                    itself, for comparison
set -u
FSWB=${FSWB_BIN:-build/fswb}
cache=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
tree=$cache/linux-source-6.1
tarball=/usr/src/linux-source-6.1.tar.xz
home=${KBUILD_BENCH_HOME:-/var/tmp/fswb-bench-kbuild}
configs=${KBUILD_BENCH_CONFIGS:-ext4/4k,xfs/4k,btrfs/default,f2fs/default}
jobs=${KBUILD_BENCH_JOBS:-$(nproc)}
nice=${KBUILD_BENCH_NICE:-10}

say() { echo "kbuild-full: $*"; }

if ! "$FSWB" kernel --help >/dev/null 2>&1; then
	say "this fswb ($FSWB) has no 'kernel' command; nothing measured"
	exit 1
fi
if [ ! -f "$tree/Kconfig" ]; then
	if [ ! -f "$tarball" ]; then
		say "$tarball is not installed (apt install linux-source-6.1); nothing measured"
		exit 1
	fi
	mkdir -p "$cache/unpack.$$" && tar -xJf "$tarball" -C "$cache/unpack.$$" &&
		{ mv -T "$cache/unpack.$$/linux-source-6.1" "$tree" 2>/dev/null || true; }
	rm -rf "$cache/unpack.$$"
fi

rm -rf "$home"
mkdir -p "$home"
export FSWB_HOME=$home
say "tree $tree, configs $configs, make -j$jobs"
start=$(date +%s)
if ! "$FSWB" kernel build --kernel "$tree" -c "$configs" -j "$jobs" --nice "$nice" >"$home/out" 2>"$home/err"; then
	say "the build failed:"
	tail -20 "$home/err" | sed 's/^/  /'
	exit 1
fi
secs=$(($(date +%s) - start))
image=$(sed -n 's/^  image    \(.*\) (.*)$/\1/p' "$home/out")
log=$(sed -n 's/^  log      //p' "$home/out")
bytes=$(stat -c %s "$image")
objects=$(grep -cE '^  (CC|AS)( \[M\])? +[^ ]+\.o$' "$log")
mods=$(grep -cE '^  (CC|AS) \[M\] +[^ ]+\.mod\.o$' "$log")
estimate=$(grep -oE 'of ~[0-9]+\)' "$home/err" | tail -1 | tr -dc 0-9)
say "full build: ${secs}s, bzImage $bytes bytes ($((bytes / 1024)) KiB), $mods modules"
if [ -n "$estimate" ]; then
	say "objects compiled: $objects, fswb's estimate $estimate ($((estimate * 100 / (objects ? objects : 1)))%)"
else
	say "objects compiled: $objects (no estimate was shown)"
fi
start=$(date +%s)
"$FSWB" kernel build --kernel "$tree" -c "$configs" -j "$jobs" --nice "$nice" >/dev/null 2>&1
say "rebuild with nothing changed: $(($(date +%s) - start))s"

if [ "${KBUILD_BASELINE:-0}" = 1 ]; then
	base=$home/baseline
	mkdir -p "$base"
	make -s -C "$tree" O="$base" ARCH=x86_64 x86_64_defconfig >/dev/null
	start=$(date +%s)
	if nice -n "$nice" make -s -C "$tree" O="$base" ARCH=x86_64 -j"$jobs" >"$base/build.log" 2>&1; then
		bytes=$(stat -c %s "$base/arch/x86/boot/bzImage")
		say "x86_64_defconfig alone: $(($(date +%s) - start))s, bzImage $bytes bytes ($((bytes / 1024)) KiB)"
	else
		say "the x86_64_defconfig build failed; see $base/build.log"
	fi
fi
