#!/usr/bin/env bash
# bench: fswb's own time for a list of tests against check run by hand on the
# same list in the same guest. Target: a ratio under 1.02.
#
# One `fswb run --shell -c CFG TESTS...`: fswb runs the list, then leaves a
# shell in that guest, where the same work is done by hand. Compared, each
# as wall-clock time on the host, in milliseconds:
#   fswb     its "tests" and "results" stages (events.jsonl): from the guest's
#            agent being ready (the job is sent: files, mkfs of TEST_DEV,
#            check, the results directory back to the host) to the results
#            stored in the run directory
#   by hand  in the shell, with the page cache dropped first: the job's mkfs
#            command, then ./check with the job's options, environment and
#            tests (what a person would type, from /run/fswb/job), from a
#            marker line before the mkfs to a marker line after check exits
# The ratio is fswb / by hand. Boot is not in either (run-startup measures
# it); fswb's whole run is printed too.
#
# Environment: BENCH_CONFIG (ext4/4k), BENCH_TESTS (generic/001 002 005 007
# 009 012), BENCH_FSTESTS_SRC (tests/fixtures/mini-fstests), BENCH_CPUS (2),
# BENCH_MEM (2G), BENCH_KEEP=1 (keep the scratch directory), FSWB_CACHE_DIR (default: the test suite's cache,
# ${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb).
# Exits 1 only when it could not measure; a missed target is reported.
set -u
cd "$(dirname "$0")/.."
SRC=${FSWB_SRCDIR:-$PWD}
FSWB=${FSWB_BIN:-$SRC/build/fswb}
export FSWB_DATADIR=${FSWB_DATADIR:-$SRC}
export FSWB_CACHE_DIR=${FSWB_CACHE_DIR:-${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb}
export TZ=UTC LC_ALL=C
CFG=${BENCH_CONFIG:-ext4/4k}
read -r -a TESTS <<<"${BENCH_TESTS:-generic/001 generic/002 generic/005 generic/007 generic/009 generic/012}"
MINI=${BENCH_FSTESTS_SRC:-$SRC/tests/fixtures/mini-fstests}
CPUS=${BENCH_CPUS:-2}
MEM=${BENCH_MEM:-2G}
TARGET=1.02
ME=run-overhead

cant() {
	echo "$ME: could not measure: $*" >&2
	exit 1
}

for tool in perl timeout; do
	command -v "$tool" >/dev/null 2>&1 || cant "'$tool' is not installed (make deps)"
done
[ -x "$FSWB" ] || cant "no fswb binary at '$FSWB' (make)"
[ "${#TESTS[@]}" -gt 0 ] || cant "BENCH_TESTS names no test"
perl -MJSON::PP -MTime::HiRes -e 1 2>/dev/null || cant "perl lacks JSON::PP or Time::HiRes"

W=$(mktemp -d "${TMPDIR:-/tmp}/fswb-bench-overhead.XXXXXX") || cant "no scratch directory"
export FSWB_HOME=$W/home HOME=$W/home
mkdir -p "$HOME"
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

hand='m=BENCH; umount /mnt/test /mnt/scratch 2>/dev/null; . /run/fswb/job/job.env && cd "$FSWB_FSTESTS_DIR" && export HOST_OPTIONS="$FSWB_JOB_DIR/$FSWB_CONFIG" FSWB_GUEST=1 && { [ -z "$FSWB_RESULT_BASE" ] || export RESULT_BASE="$FSWB_RESULT_BASE"; } && eval "set -- $FSWB_CHECK_ENV" && for e do export "$e"; done; rm -rf "${FSWB_RESULT_BASE:-$FSWB_FSTESTS_DIR/results}"; sync; echo 3 >/proc/sys/vm/drop_caches; echo "$m-MKFS"; eval "set -- $FSWB_MKFS_TEST"; "$@" >/dev/null 2>&1; echo "$m-CHECK mkfs=$?"; eval "set -- $FSWB_CHECK_OPTS $FSWB_CHECK_TESTS"; ./check "$@" </dev/null; echo "$m-END check=$?"; exit'
echo "measuring: fswb run --shell -c $CFG ${TESTS[*]}, then the same by hand in its guest"
printf '%s\n' "$hand" >"$W/hand.in"
t_fswb=$(now_ms)
timeout 3600 "$FSWB" run --shell -c "$CFG" --fstests-src "$MINI" --cpus "$CPUS" --mem "$MEM" \
	"${TESTS[@]}" <"$W/hand.in" 2>"$W/fswb.err" | stamp "$W/fswb.out"
rc=${PIPESTATUS[0]}
t_done=$(now_ms)
[ "$rc" -le 1 ] || cant "fswb run failed (exit $rc): $(tail -3 "$W/fswb.err")"
run=$(last_run)
[ -n "$run" ] && [ -s "$run/events.jsonl" ] || cant "the run left no events.jsonl"
eval "$(perl -e "$EVENTS" "$run/events.jsonl")"
[ -n "${ev_begin_tests:-}" ] && [ -n "${ev_end_results:-}" ] ||
	cant "no tests and results stages in $run/events.jsonl"
[ "${ev_test_ends:-0}" -gt 0 ] || cant "fswb ran no test: $(tail -3 "$W/fswb.err")"

t_mkfs=$(at "$W/fswb.out" '(?:\A|[\r\n])BENCH-MKFS\b')
t_check=$(at "$W/fswb.out" '(?:\A|[\r\n])BENCH-CHECK\b')
t_end=$(at "$W/fswb.out" '(?:\A|[\r\n])BENCH-END\b')
[ -n "$t_mkfs" ] && [ -n "$t_check" ] && [ -n "$t_end" ] ||
	cant "the work by hand in the guest did not print its markers: $(tail -c 600 "$W/fswb.out")"
grep -aq 'BENCH-CHECK mkfs=0' "$W/fswb.out" || cant "mkfs by hand in the guest failed"
# the tests check by hand started: test names at the start of a line
hand_tests=$(perl -e 'local $/; my $s = <STDIN>; $s =~ /[\r\n]BENCH-CHECK\b(.*?)[\r\n]BENCH-END\b/s or exit;
	my $b = $1; my $n = () = $b =~ /[\r\n][a-z0-9]+\/[0-9]{3}[^\s]*[ \t]/g; print $n' <"$W/fswb.out")
[ "${hand_tests:-0}" -eq "$ev_test_ends" ] ||
	cant "fswb ran $ev_test_ends tests but check by hand ${hand_tests:-0}"

fswb=$((ev_end_results - ev_begin_tests))
byhand=$((t_end - t_mkfs))
echo
echo "tests: ${TESTS[*]} ($ev_test_ends ran, $CFG, $CPUS CPUs, $MEM)"
echo "fswb, tests and results stages:             $(secs "$fswb")"
echo "    job sent to check's first test          $(secs $((ev_first_start - ev_begin_tests)))"
echo "    first test start to last test end       $(secs $((ev_last_end - ev_first_start)))"
echo "    last test end to the results stored     $(secs $((ev_end_results - ev_last_end)))"
echo "by hand in the same guest, mkfs + check:    $(secs "$byhand")"
echo "    mkfs $(secs $((t_check - t_mkfs))), check $(secs $((t_end - t_check)))"
echo "(fswb's whole run: process start to the shell $(secs $((${ev_begin_shell:-$t_done} - t_fswb))); with the shell and power-off $(secs $((t_done - t_fswb))))"
awk -v f="$fswb" -v h="$byhand" -v t="$TARGET" 'BEGIN {
	r = f / h; printf "ratio fswb / by hand: %.3f (target under %s): %s\n", r, t, r < t ? "met" : "MISSED" }'
exit 0
