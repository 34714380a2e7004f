#!/usr/bin/env bash
# fswb run -n with a local fstests tree: what each configuration would run,
# resolved on this host (no guest), with descriptions, groups, counts and
# what is left out and why; against tests/fixtures/mini-fstests.
. "$(dirname "$0")/../lib.sh"

mini=$SRCDIR/tests/fixtures/mini-fstests

out=$("$FSWB" run -n -c ext4/4k -g smoketest --fstests-src "$mini" 2>"$T/err")
rc=$?
check "-n exits 0" test "$rc" -eq 0
check "-n boots nothing and warns of nothing" test ! -s "$T/err"
check "the configuration and check's words head the list" \
	grep -q '^ext4/4k (FSTYP ext4): -g smoketest -x dax -x clone$' <<<"$out"
check "a test comes with its description and groups" \
	grep -qE '^  generic/003 +Directory operations on TEST_DIR: create, rename, hard link, unlink,  \[auto quick smoketest dir\]$' <<<"$out"
check "the filesystem's own directory is searched" grep -qE '^  ext4/001 ' <<<"$out"
check "the count is check's" grep -q '^ext4/4k: 4 tests to run, 0 left out$' <<<"$out"
check "the total says nothing ran" grep -q "^4 tests to run in 1 configuration, from $mini; nothing was run (-n)$" <<<"$out"
check "no run directory is made" test ! -e "$FSWB_HOME/data/runs"
check "the shard count and why" grep -q '^shards: 1 guest' <<<"$(
	"$FSWB" run -n -c ext4/4k -g smoketest --fstests-src "$mini" --shards 1)"

# two configurations on two guests at once: one pool, shorter than one after another
out=$("$FSWB" run -n -c ext4/4k,xfs/4k -g quick --fstests-src "$mini" --shards 2)
check "--shards 2 is said" grep -q '^shards: 2 guests at once (--shards 2)$' <<<"$out"
check "the estimate is on 2 guests, and one after another" \
	grep -qE '^estimate: (~[0-9]+ min|<1 min) on 2 guests at once \(from test groups; no runs yet(; TCG)?; one guest after another: ~[0-9]+ min\)$' <<<"$out"

printf 'generic/005 # flaky here\n' >"$T/excl"
out=$("$FSWB" run -n -c ext4/4k,xfs/4k -g auto,dangerous -x dangerous -e generic/002 -E "$T/excl" \
	--fstests-src "$mini" generic/012 ext4/001)
check "an -x group's tests are left out, naming the group" \
	grep -qE '^  generic/010 +left out: -x dangerous$' <<<"$out"
check "-e is named" grep -qE '^  generic/002 +left out: -e generic/002$' <<<"$out"
check "-E is named with its file" grep -qE "^  generic/005 +left out: -E $T/excl\$" <<<"$out"
check "another filesystem's named test is left out of xfs/4k" \
	grep -qE '^  ext4/001 +left out: not a test for xfs' <<<"$out"
check "ext4/4k counts 001-009 and 012 less 002 and 005, with ext4/001" \
	grep -q '^ext4/4k: 9 tests to run, 4 left out$' <<<"$out"
check "xfs/4k counts the generic ones" grep -q '^xfs/4k: 8 tests to run, 5 left out$' <<<"$out"

# A configuration's own exclude file, in a profiles directory of the test's own.
cp -r "$SRCDIR/profiles" "$T/profiles"
printf 'generic/004 # left out by this test\n' >"$T/profiles/exclude/ext4/4k.exclude"
out=$(FSWB_DATADIR=$T "$FSWB" run -n -c ext4/4k -g quick --fstests-src "$mini")
check "the configuration's exclude file is named below profiles/" \
	grep -qE "^  generic/004 +left out: the configuration's exclude file exclude/ext4/4k.exclude$" <<<"$out"

json=$("$FSWB" run -n --json -c ext4/4k -g quick -x log --fstests-src "$mini")
check "--json: the count" test "$(jq '.configs[0].count' <<<"$json")" = 9
check "--json: a test's groups" test "$(jq -r '.configs[0].tests[1] | .name + ": " + (.groups | join(" "))' <<<"$json")" = "generic/001: auto quick smoketest rw"
check "--json: what is left out and why" \
	test "$(jq -r '.configs[0].left_out[0] | .name + " " + .why' <<<"$json")" = "generic/004 -x log"

# a named test the local tree does not have is refused on this host, before
# anything is built (check would ignore it once a guest has booted)
err=$("$FSWB" run -c ext4/4k --fstests-src "$mini" generic/001 generic/0099 2>&1)
rc=$?
check "a test not in the local tree exits 2" test "$rc" -eq 2
check "it is named with the tree's closest names" \
	grep -qF "fswb: error: tests.tests[1]: 'generic/0099' is not a test of the fstests tree $mini (did you mean generic/009, generic/001, generic/002?)" <<<"$err"
check "and nothing was started" test ! -e "$FSWB_HOME/data/runs"
err=$("$FSWB" run -n -c ext4/4k --fstests-src "$mini" 'generic/9*' generic/001 2>&1)
check "a pattern matching nothing is refused too" \
	grep -qF "fswb: error: tests.tests[0]: 'generic/9*' matches no test of the fstests tree $mini" <<<"$err"
err=$("$FSWB" run -n -c ext4/4k --fstests-src "$mini" ext4/zzzzzzzzz 2>&1)
check "a name far from every test suggests none" \
	grep -qxF "fswb: error: tests.tests[0]: 'ext4/zzzzzzzzz' is not a test of the fstests tree $mini" <<<"$err"
out=$("$FSWB" run -n -c ext4/4k --fstests-src "$mini" 'generic/00?')
check "a pattern that matches is taken" grep -q '^ext4/4k: 9 tests to run, 0 left out$' <<<"$out"

err=$("$FSWB" run -n -c ext4/4k -g nosuchgroup --fstests-src "$mini" 2>&1)
rc=$?
check "a group with no tests exits 2" test "$rc" -eq 2
check "and says why" grep -q 'cannot select: ' <<<"$err"

done_testing
