#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2015,SC2154,SC2054,SC2012 # perl and guest code in single quotes; ev_* come from eval
# bench: the warm start of `fswb run` to its first test, against the least
# it could be. Target: a ratio under 1.3.
#
# Measured, each as wall-clock time on the host, in milliseconds:
#   fswb     a warm `fswb run -c CFG TEST` (kernel and appliance cached: a
#            dry run warms them first): from its run_begin event to its first
#            test_start (events.jsonl)
#   boot     a bare boot of the same kernel, fswb's initramfs and appliance
#            (through a throwaway qcow2 overlay) with QEMU started as fswb
#            starts it, the same accelerator, CPUs, memory and disks, and
#            init=/bin/sh printing a marker line on the serial console: from
#            QEMU's start to that line
#   mkfs     making the test filesystem by hand in the guest, with the
#            command fswb's job runs (check needs TEST_DEV formatted)
#   check    check's own start-up, run by hand in the same guest (`fswb run
#            --shell`, page cache dropped first) with the job's options and
#            tests: from a marker line printed just before ./check to the
#            first test's name
# least = boot + mkfs + check; the ratio is fswb / least (and, without the
# mkfs, fswb / (boot + check)). Times of lines are taken as they reach the
# host (console bytes stamped as they arrive).
#
# Environment: BENCH_CONFIG (ext4/4k), BENCH_TEST (generic/001),
# BENCH_FSTESTS_SRC (tests/fixtures/mini-fstests), BENCH_CPUS (2),
# BENCH_MEM (2G), BENCH_KEEP=1 (keep the scratch directory), FSWB_CACHE_DIR
# (default: the test suite's cache,
# ${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb).
# Exits 1 only when it could not measure; a missed target is reported.
set -u
cd "$(dirname "$0")/.." || exit 1
SRC=${FSWB_SRCDIR:-$PWD}
FSWB=${FSWB_BIN:-$SRC/build/fswb}
export FSWB_DATADIR=${FSWB_DATADIR:-$SRC}
export FSWB_CACHE_DIR=${FSWB_CACHE_DIR:-${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb}
export TZ=UTC LC_ALL=C
CFG=${BENCH_CONFIG:-ext4/4k}
TEST=${BENCH_TEST:-generic/001}
MINI=${BENCH_FSTESTS_SRC:-$SRC/tests/fixtures/mini-fstests}
CPUS=${BENCH_CPUS:-2}
MEM=${BENCH_MEM:-2G}
TARGET=1.3
ME="run-startup"

cant() {
	echo "$ME: could not measure: $*" >&2
	exit 1
}

for tool in qemu-system-x86_64 qemu-img perl timeout truncate; do
	command -v "$tool" >/dev/null 2>&1 || cant "'$tool' is not installed (make deps)"
done
[ -x "$FSWB" ] || cant "no fswb binary at '$FSWB' (make)"
perl -MJSON::PP -MTime::HiRes -e 1 2>/dev/null || cant "perl lacks JSON::PP or Time::HiRes"

W=$(mktemp -d "${TMPDIR:-/tmp}/fswb-bench-startup.XXXXXX") || cant "no scratch directory"
export FSWB_HOME=$W/home HOME=$W/home
mkdir -p "$HOME" "$W/bare"
if [ -n "${BENCH_KEEP:-}" ]; then echo "$ME: keeping $W"; else trap 'rm -rf "$W"' EXIT; fi

# stamp LOG: copy stdin to LOG; LOG.t gets "MS BYTES" as each chunk arrives
STAMP='use strict; use Time::HiRes qw(time);
open(my $l, ">", $ARGV[0]) or die "$ARGV[0]: $!"; open(my $t, ">", "$ARGV[0].t") or die;
my ($off, $buf, $n) = (0);
while ($n = sysread(STDIN, $buf, 65536)) {
	my $ms = int(time * 1000); print $l $buf; $off += $n; print $t "$ms $off\n";
}'
stamp() { perl -e "$STAMP" "$1"; }

# at LOG REGEX [AFTER]: the time (ms) by which the first match of REGEX (after
# the first match of AFTER) had arrived; nothing when there is none
AT='use strict; my ($log, $re, $after) = @ARGV;
open(my $l, "<", $log) or exit; local $/; my $s = <$l>; close $l;
my $from = 0;
if (defined $after && length $after) { $s =~ /$after/g or exit; $from = pos($s); }
pos($s) = $from; $s =~ /$re/g or exit; my $end = pos($s);
open(my $t, "<", "$log.t") or exit; $/ = "\n";
while (<$t>) { my ($ms, $off) = split; if ($off >= $end) { print "$ms\n"; exit } }'
at() { perl -e "$AT" "$@"; }

# events FILE: ev_NAME=VALUE lines for the times and facts used below
EVENTS='use strict; use JSON::PP; my (%o, $n);
while (<>) {
	my $e = eval { decode_json($_) } or next; my ($t, $ms) = ($e->{event}, $e->{time});
	$o{run_begin} //= $ms if $t eq "run_begin";
	$o{run_end} = $ms if $t eq "run_end";
	$o{"begin_$e->{stage}"} //= $ms if $t eq "stage_begin";
	$o{"end_$e->{stage}"} = $ms if $t eq "stage_end";
	if ($t eq "stage_end" && $e->{stage} eq "kernel" && ($e->{message} // "") =~ /^(\S+) (\S+)$/) {
		($o{kver}, $o{kimage}) = ($1, $2);
	}
	$o{appliance} = $1 if $t eq "stage_progress" && ($e->{detail} // "") =~ /^\w+ ([0-9a-f]{6,})/;
	$o{section} //= $ms if $t eq "section";
	$o{first_start} //= $ms if $t eq "test_start";
	if ($t eq "test_end") { $o{last_end} = $ms; $n++; }
	$o{tcg} = 1 if $t eq "warning" && ($e->{message} // "") =~ /KVM is not usable|emulat/;
}
$o{test_ends} = $n // 0;
for (sort keys %o) { print "ev_$_=$o{$_}\n" if $o{$_} =~ m{^[\w./+:-]+$}; }'

now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo "${t:0:13}"
}
secs() { awk -v ms="$1" 'BEGIN { printf "%.2f s", ms / 1000 }'; }
last_run() { ls -d "$FSWB_HOME"/data/runs/*/ 2>/dev/null | sort | tail -1; }

# 1. Warm the caches: the kernel, the appliance, the initramfs.
echo "warming: fswb run -n -c $CFG $TEST (kernel, appliance and initramfs cached)"
"$FSWB" run -n -c "$CFG" --fstests-src "$MINI" --cpus "$CPUS" --mem "$MEM" "$TEST" \
	>"$W/warm.out" 2>&1
rc=$?
[ "$rc" -le 1 ] || cant "the warm-up run failed (exit $rc): $(tail -3 "$W/warm.out")"

# 2. The warm run, then check by hand in the same guest.
hand='m=BENCH; umount /mnt/test /mnt/scratch 2>/dev/null; . /run/fswb/job/job.env && cd "$FSWB_FSTESTS_DIR" && export HOST_OPTIONS="$FSWB_JOB_DIR/$FSWB_CONFIG" FSWB_GUEST=1 && { [ -z "$FSWB_RESULT_BASE" ] || export RESULT_BASE="$FSWB_RESULT_BASE"; } && eval "set -- $FSWB_CHECK_ENV" && for e do export "$e"; done; rm -rf "${FSWB_RESULT_BASE:-$FSWB_FSTESTS_DIR/results}"; sync; echo 3 >/proc/sys/vm/drop_caches; echo "$m-MKFS"; eval "set -- $FSWB_MKFS_TEST"; "$@" >/dev/null 2>&1; echo "$m-CHECK mkfs=$?"; eval "set -- $FSWB_CHECK_OPTS $FSWB_CHECK_TESTS"; ./check "$@" </dev/null; echo "$m-END check=$?"; exit'
echo "measuring: fswb run --shell -c $CFG $TEST, then check by hand in its guest"
printf '%s\n' "$hand" >"$W/hand.in"
t_fswb=$(now_ms)
timeout 1800 "$FSWB" run --shell -c "$CFG" --fstests-src "$MINI" --cpus "$CPUS" --mem "$MEM" \
	"$TEST" <"$W/hand.in" 2>"$W/fswb.err" | stamp "$W/fswb.out"
rc=${PIPESTATUS[0]}
[ "$rc" -le 1 ] || cant "fswb run failed (exit $rc): $(tail -3 "$W/fswb.err")"
run=$(last_run)
[ -n "$run" ] && [ -s "$run/events.jsonl" ] || cant "the run left no events.jsonl"
eval "$(perl -e "$EVENTS" "$run/events.jsonl")"
for v in ev_run_begin ev_begin_boot ev_end_boot ev_begin_tests ev_section ev_first_start; do
	[ -n "${!v:-}" ] || cant "${v#ev_} is not in $run/events.jsonl"
done

t_mkfs=$(at "$W/fswb.out" '(?:\A|[\r\n])BENCH-MKFS\b')
t_check=$(at "$W/fswb.out" '(?:\A|[\r\n])BENCH-CHECK\b')
t_first=$(at "$W/fswb.out" '[\r\n][a-z0-9]+/[0-9]{3}[^\s]*[ \t]' '(?:\A|[\r\n])BENCH-CHECK\b')
[ -n "$t_mkfs" ] && [ -n "$t_check" ] && [ -n "$t_first" ] ||
	cant "check by hand in the guest did not print its markers and a test: $(tail -c 600 "$W/fswb.out")"
grep -aq 'BENCH-CHECK mkfs=0' "$W/fswb.out" || cant "mkfs by hand in the guest failed"

# 3. The bare boot: the same kernel, initramfs and appliance to init=/bin/sh.
kernel=${ev_kimage:-}
[ -n "$kernel" ] && [ -r "$kernel" ] || cant "no kernel image in the run's events"
initrd=$("$FSWB" appliance initramfs --kernel "${ev_kver:-}" 2>"$W/initrd.err" | tail -1)
[ -n "$initrd" ] && [ -r "$initrd" ] || cant "no initramfs for '${ev_kver:-}': $(tail -1 "$W/initrd.err")"
"$FSWB" appliance list --json >"$W/appliances.json" 2>/dev/null
image=$(perl -MJSON::PP -e 'local $/; my $l = decode_json(<STDIN>); my ($id, $src) = @ARGV;
	for (@$l) { if ($id ? $_->{id} eq $id : ($_->{fstests_src} // "") eq $src) { print $_->{image}; last } }' \
	"${ev_appliance:-}" "$MINI" <"$W/appliances.json")
[ -n "$image" ] && [ -r "$image" ] || cant "the run's appliance '${ev_appliance:-?}' is not in 'fswb appliance list'"
if [ -n "${ev_tcg:-}" ]; then
	accel=(-accel tcg,thread=multi -cpu max) mode=TCG
else
	accel=(-accel kvm -cpu host) mode=KVM
fi
mem_mib=$(awk -v m="$MEM" 'BEGIN { n = m + 0; u = toupper(substr(m, length(m)));
	print (u == "G") ? n * 1024 : (u == "M") ? n : int(n / 1048576) }')
qemu-img create -q -f qcow2 -F raw -b "$image" "$W/bare/root.qcow2" || cant "qemu-img create failed"
truncate -s 5G "$W/bare/test.img" "$W/bare/scratch.img"
echo "measuring: a bare boot of $(basename "$kernel") to init=/bin/sh ($mode)"
t_bare=$(now_ms)
timeout 600 qemu-system-x86_64 -nodefaults -no-user-config -no-reboot -display none \
	-m "$mem_mib" -smp "$CPUS" "${accel[@]}" -kernel "$kernel" -initrd "$initrd" \
	-append 'console=ttyS0,115200 root=/dev/vda rw rootfstype=ext4 init=/bin/sh panic=-1 printk.devkmsg=on systemd.show_status=0 -- -c "echo BENCH-BOOTED; echo o >/proc/sysrq-trigger; sleep 60"' \
	-drive "file=$W/bare/root.qcow2,if=virtio,format=qcow2,cache=unsafe" \
	-drive "file=$W/bare/test.img,if=virtio,format=raw,cache=unsafe" \
	-drive "file=$W/bare/scratch.img,if=virtio,format=raw,cache=unsafe" \
	-serial stdio -device virtio-serial-pci \
	-chardev null,id=shell -device virtserialport,chardev=shell,name=org.fswb.shell \
	-chardev null,id=ctl -device virtserialport,chardev=ctl,name=org.fswb.ctl \
	-device virtio-rng-pci </dev/null 2>"$W/bare/qemu.err" | stamp "$W/bare/console.log"
t_booted=$(at "$W/bare/console.log" '(?:\A|[\r\n])BENCH-BOOTED\r?\n')
[ -n "$t_booted" ] || cant "the bare boot printed no marker: $(tail -3 "$W/bare/console.log") $(tail -2 "$W/bare/qemu.err")"

# 4. The numbers.
fswb=$((ev_first_start - ev_run_begin))
boot=$((t_booted - t_bare))
mkfs=$((t_check - t_mkfs))
check=$((t_first - t_check))
least=$((boot + mkfs + check))
echo
echo "fswb warm start, run_begin to the first test_start:  $(secs "$fswb")"
echo "    kernel+appliance stages $(secs $((ev_begin_boot - ev_run_begin))), boot stage (overlay, QEMU, guest, agent hello) $(secs $((ev_end_boot - ev_begin_boot)))"
echo "    tests stage to check's header $(secs $((ev_section - ev_begin_tests))), header to the first test $(secs $((ev_first_start - ev_section)))"
echo "    (fswb's process start to run_begin: $((ev_run_begin - t_fswb)) ms)"
echo "least it could be ($mode, $CPUS CPUs, $MEM):               $(secs "$least")"
echo "    bare boot, QEMU start to init's marker line       $(secs "$boot")"
echo "    mkfs of TEST_DEV by hand                          $(secs "$mkfs")"
echo "    check by hand, start to the first test's name     $(secs "$check")"
awk -v f="$fswb" -v l="$least" -v b="$boot" -v c="$check" -v t="$TARGET" 'BEGIN {
	r = f / l; printf "ratio fswb / (boot + mkfs + check): %.2f (target under %s): %s\n", r, t, r < t ? "met" : "MISSED"
	printf "ratio fswb / (boot + check), mkfs left out: %.2f\n", f / (b + c) }'
exit 0
