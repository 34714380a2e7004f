#!/usr/bin/env bash
# Results that travel: fswb results compare, baseline, flaky, report and
# html on recorded runs (the fixture runs of tests/ui and the real fstests
# outputs of tests/fixtures, imported), and the HTML page as a real browser
# renders it (Debian's chromium, headless): its DOM, and screenshots at 1280
# and 390 pixels wide kept in $BUILD/test-artifacts/.
. "$(dirname "$0")/../lib.sh"

FIX=$SRCDIR/tests/fixtures/fstests-runs
RUNS=$FSWB_HOME/data/runs
ART=${BUILD_DIR:-$SRCDIR/build}/test-artifacts
mkdir -p "$RUNS" "$ART"

# A run in history from a fixture's results: ID CASE [sed expression]
add_run() {
	mkdir -p "$RUNS/$1"
	echo '{}' >"$RUNS/$1/plan.json"
	"$FSWB" results import "$FIX/$2/results" --json |
		sed -e "s|\"id\": null|\"id\": \"$1\"|" -e 's|"config": null|"config": "ext4/4k"|' \
			-e "${3:-s|^||}" >"$RUNS/$1/run.json"
}

narrow() { ! awk 'length($0) > 79 { bad = 1 } END { exit !bad }'; }
no_escapes() { ! grep -q $'\x1b'; }

# generic/002 fails in B-mismatch; it passes in the runs the sed makes pass.
add_run 20261201-100000 B-mismatch 's|"status": "fail"|"status": "pass"|'
add_run 20261202-100000 B-mismatch
add_run 20261203-100000 B-mismatch 's|"status": "fail"|"status": "pass"|'
add_run 20261204-100000 B-mismatch

out=$("$FSWB" results compare last~1 last)
rc=$?
check "compare: a new failure exits 1" test "$rc" -eq 1
check "compare: the new failure is listed" grep -qE '^  new failure +generic/002 +pass -> fail$' <<<"$out"
check "compare: per configuration" grep -q '^ext4/4k: 1 new failure; 1 the same$' <<<"$out"
check "compare: flaky tests are marked" grep -q 'flaky: failed 2 of its last 4 runs' <<<"$out"
check "compare: under 80 columns" narrow <<<"$out"
"$FSWB" results compare last~2 last >/dev/null
check "compare: the same failures exit 0" test $? -eq 0
json=$("$FSWB" results compare last~1 last --json)
check "compare --json: counts" grep -q '"new_failure": 1' <<<"$json"
check "compare --json: the runs" grep -q '"new": "20261204-100000"' <<<"$json"
err=$("$FSWB" results compare last~9 last 2>&1)
check "compare: a run that is not there exits 2" test $? -eq 2
check "compare: ... and says how many there are" grep -q "there are only 4 runs" <<<"$err"
err=$("$FSWB" results compare last --threshold x 2>&1)
check "compare: a bad threshold is refused" grep -q -- "--threshold: 'x' is not a number" <<<"$err"

out=$("$FSWB" results flaky)
check "flaky: generic/002 with its rate" grep -qE '^  ext4/4k +generic/002 +failed 2 of 4 \(50%\)$' <<<"$out"
out=$("$FSWB" results flaky last --runs 2 --json)
check "flaky --runs 2 --json" grep -q '"rate": 0.5' <<<"$out"

out=$("$FSWB" results baseline list)
check "baseline list: none yet" grep -q "No baselines yet" <<<"$out"
out=$("$FSWB" results baseline set last~1)
check "baseline set: per kernel and configuration" grep -q '^Baseline of ext4/4k on 6.1.0-57-cloud-amd64: run 20261203-100000$' <<<"$out"
check "baseline: kept under the data directory" test -f "$FSWB_HOME/data/baselines.json"
out=$("$FSWB" results baseline list)
check "baseline list" grep -qE '^6.1.0-57-cloud-amd64 +ext4/4k +20261203-100000 ' <<<"$out"
err=$("$FSWB" results baseline rm 5.0 2>&1)
check "baseline rm: nothing there exits 2" test $? -eq 2
out=$("$FSWB" results baseline rm 20261203-100000)
check "baseline rm by run" grep -q "Removed 1 baseline." <<<"$out"

# The report for a mailing list: local.config and a kernel-log slice in the run.
R=$RUNS/20261204-100000/results/ext4-4k
mkdir -p "$R/generic"
printf '# TEST_DEV was made with: mkfs.ext4 /dev/vdb\nexport FSTYP=ext4\nexport TEST_DEV=/dev/vdb\n' >"$R/local.config"
printf '[  10.0] run fstests generic/002 at now\n[  10.5] WARNING: CPU: 0 PID: 1 at fs/ext4/super.c:1 x\e[31m\n[  10.6] next line\n' >"$R/generic/002.kmsg"
out=$("$FSWB" results report last)
check "report: the run" grep -q '^fstests results of run 20261204-100000$' <<<"$out"
check "report: the kernel" grep -q '^Kernel:   6.1.0-57-cloud-amd64 (an installed kernel)$' <<<"$out"
check "report: local.config" grep -q '^    export TEST_DEV=/dev/vdb$' <<<"$out"
check "report: the failure and its diff" grep -q '^generic/002 on ext4/4k: fail' <<<"$out"
check "report: the first warning, without its stamp" grep -q '^    WARNING: CPU: 0 PID: 1 at fs/ext4/super.c:1 x?\[31m$' <<<"$out"
check "report: reproduce with fswb" grep -q '^    fswb run --kernel 6.1.0-57-cloud-amd64 generic/002$' <<<"$out"
check "report: reproduce with check" grep -q '^    ./check generic/002$' <<<"$out"
check "report: the test is flaky lately" grep -q '^  It is flaky: failed 2 of its last 4 runs.$' <<<"$out"
check "report: under 80 columns" narrow <<<"$out"
check "report: no escape sequences" no_escapes <<<"$out"
err=$("$FSWB" results report last generic/999 2>&1)
check "report of a test not in the run exits 2" test $? -eq 2

# Imports into history: an xfstests-bld results tree (as gce-xfstests
# get-results leaves it) packed as a tarball, with a link that must not be
# followed, and check's results directory with sections.
B=$T/bld
mkdir -p "$B/ext4"
cp -r "$FIX/B-mismatch/results" "$B/ext4/results-4k"
cp -r "$FIX/A-plain-pass-notrun/results" "$B/ext4/results-1k"
printf 'FS: ext4\nEXT_MKFS_OPTIONS: -b 1024\n' >"$B/ext4/results-1k/config"
printf 'KERNEL: kernel\t6.1.0-57-cloud-amd64 #1 SMP x86_64\n' >"$B/run-stats"
cp "$FIX/B-mismatch/stdout.txt" "$B/runtests.log"
ln -s /etc/passwd "$B/ext4/results-4k/generic/002.dmesg"
tar -C "$B" -cJf "$T/results.tar.xz" .
out=$("$FSWB" results import "$T/results.tar.xz" --keep)
check "import of xfstests-bld results: per configuration" grep -q '^ext4/1k: 5 tests, 0 failures, 2 skipped' <<<"$out"
check "... ext4/4k too" grep -q '^ext4/4k: 2 tests, 1 failures, 0 skipped' <<<"$out"
check "... kept as a run" grep -qE "^Kept as run [0-9]{8}-[0-9]{6} " <<<"$out"
kept=$(sed -n "s/^Kept as run \([^ ]*\) .*/\1/p" <<<"$out")
check "... with its files" test -f "$RUNS/$kept/results/ext4-4k/generic/002.out.bad"
check "... but not the link" test ! -e "$RUNS/$kept/results/ext4-4k/generic/002.dmesg"
check "... listed with the others" grep -qE "^$kept +finished +ext4/1k,ext4/4k " <<<"$("$FSWB" results)"
check "... and reported" grep -q '^Configuration ext4/4k:' <<<"$("$FSWB" results report "$kept")"
S=$T/sections/results
mkdir -p "$S"
cp -r "$FIX/B-mismatch/results" "$S/ext4_4k"
cp -r "$FIX/A-plain-pass-notrun/results" "$S/xfs_4k"
out=$("$FSWB" results import "$T/sections" --keep)
check "import of check's results with sections" grep -q '^xfs_4k: 5 tests, 0 failures, 2 skipped' <<<"$out"
err=$("$FSWB" results import "$T/nothing.tar.gz" 2>&1)
check "a missing tarball is named" grep -q "nothing.tar.gz" <<<"$err"

# The page, and what chromium makes of it.
"$FSWB" results baseline set last~1 >/dev/null
check "html: written" "$FSWB" results html last -o "$T/run.html"
check "html: -o is needed" test "$("$FSWB" results html last >/dev/null 2>&1; echo $?)" -eq 2
check "html: the regression against the baseline" grep -q '<tr class="new_failure"><td>new failure</td><td>ext4/4k</td><td>generic/002</td>' "$T/run.html"
cp "$T/run.html" "$ART/run.html"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	skip "html in a browser" "chromium is not installed (scripts/install-deps installs it)"
	done_testing
	exit
fi
browse() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chromium" --disable-dev-shm-usage "$@" 2>>"$T/chromium.log"
}
dom=$(browse --dump-dom "file://$T/run.html")
check "browser: the DOM has the title" grep -q '<h1>fstests run 20261204-100000</h1>' <<<"$dom"
check "browser: the failure's article" grep -q '<article class="failure" id="fail-ext4-4k-generic-002">' <<<"$dom"
check "browser: the kernel log folded" grep -q '<details class="kmsg"><summary>' <<<"$dom"
check "browser: flaky said" grep -qE '<p class="flaky">It is flaky: failed [0-9]+ of its last [0-9]+ runs.</p>' <<<"$dom"
check "browser: the chart" grep -q '<svg viewBox="0 0 480 ' <<<"$dom"
check "browser: no script ran or was added" test "$(grep -c '<script' <<<"$dom")" -eq 0
for w in 1280 390; do
	rm -f "$ART/run-$w.png"
	browse --screenshot="$ART/run-$w.png" --window-size="$w,2400" --hide-scrollbars "file://$T/run.html" >/dev/null
	check "browser: a screenshot at $w pixels" test -s "$ART/run-$w.png"
done
done_testing
