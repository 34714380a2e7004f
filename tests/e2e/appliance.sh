#!/usr/bin/env bash
# fswb appliance build|list|rm: the command line, the config file, and real
# builds of a tiny appliance (the base system and mount, fstests from a git
# repository made here) from the host's mirror: two at once (one builds, the
# other waits and reuses), in mmdebstrap's unshare mode, with debootstrap, a
# failing one, an interrupted one, and removal. The tiny appliances are kept
# in the shared test cache ($FSWB_TEST_CACHE/fswb), so a second run reuses
# them; the failing and the interrupted builds run every time.
. "$(dirname "$0")/../lib.sh"

# a missing command is a failure of this fswb, not a reason to skip
if ! "$FSWB" appliance --help >/dev/null 2>&1; then
	fail "fswb appliance --help" "this fswb has no working 'appliance' command"
	done_testing
	exit
fi
unset FSWB_CACHE_DIR
cache=$FSWB_HOME/cache/appliances
shared=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}/fswb

# ---- the command line ----
help=$("$FSWB" appliance --help)
check "appliance --help shows build" grep -q '^usage: fswb appliance build' <<<"$help"
check "appliance --help shows rm" grep -q 'fswb appliance rm ID... | --all' <<<"$help"
err=$("$FSWB" appliance biuld 2>&1)
rc=$?
check "an unknown subcommand exits 2" test "$rc" -eq 2
check "an unknown subcommand suggests build" grep -q "did you mean 'build'" <<<"$err"
err=$("$FSWB" appliance build --fstest-src x 2>&1)
check "a misspelt option suggests the right one" grep -q "did you mean '--fstests-src'" <<<"$err"
out=$("$FSWB" appliance list)
check "list of an empty cache says how to make one" grep -q "fswb appliance build" <<<"$out"
check "list --json of an empty cache is []" test "$("$FSWB" appliance list --json | jq length)" = 0
err=$("$FSWB" appliance rm 2>&1)
check "rm without an id exits 2" test $? -eq 2
err=$("$FSWB" appliance rm xyz 2>&1)
check "rm of a bad id names it" grep -q "'xyz' is not an appliance id" <<<"$err"
err=$("$FSWB" appliance rm abcdef 2>&1)
check "rm of an unknown id says so" grep -q "no appliance 'abcdef'" <<<"$err"

if ! "$FSWB" appliance build --dry-run --fstests-src "$SRCDIR/tests/fixtures/mini-fstests" \
	>"$T/dry" 2>&1; then
	skip "appliance builds" "cannot build here: $(cat "$T/dry")"
	done_testing
	exit
fi

# ---- the config file and options ----
mini=$SRCDIR/tests/fixtures/mini-fstests
mkdir -p "$FSWB_HOME/config"
printf '# test\nrelease = bookworm\nmirror = http://mirror.example.org/debian\n' \
	>"$FSWB_HOME/config/config"
j=$("$FSWB" appliance build --dry-run --json --fstests-src "$mini")
check "the config file's mirror is used" \
	test "$(jq -r .mirror <<<"$j")" = http://mirror.example.org/debian
check "the config file's release is used" test "$(jq -r .release <<<"$j")" = bookworm
check "dry-run says it is not cached" test "$(jq -r .cached <<<"$j")" = false
j2=$("$FSWB" appliance build --dry-run --json --fstests-src "$mini" --mirror http://other.example.org/debian)
check "--mirror wins over the config file" \
	test "$(jq -r .mirror <<<"$j2")" = http://other.example.org/debian
check "another mirror is another appliance" test "$(jq -r .key <<<"$j")" != "$(jq -r .key <<<"$j2")"
printf 'release = bookworm\nnot a setting\n' >"$FSWB_HOME/config/config"
err=$("$FSWB" appliance build --dry-run --fstests-src "$mini" 2>&1)
rc=$?
check "a bad config line exits 2" test "$rc" -eq 2
check "a bad config line is named by file and line" \
	grep -q "config' line 2: 'not a setting' is not 'key = value'" <<<"$err"
rm -f "$FSWB_HOME/config/config"
err=$("$FSWB" appliance build --dry-run --fstests-src "$T/nowhere" 2>&1)
check "a missing fstests directory is named" grep -q "fstests source '$T/nowhere'" <<<"$err"

# the host's mirror, for the real builds
j=$("$FSWB" appliance build --dry-run --json --fstests-src "$mini")
mirror=$(jq -r .mirror <<<"$j")
release=$(jq -r .release <<<"$j")
if ! curl -fsI --max-time 15 "$mirror/dists/$release/InRelease" >/dev/null 2>&1; then
	skip "appliance builds" "the mirror $mirror is not reachable"
	done_testing
	exit
fi

# from here on the builds share the test cache
export FSWB_CACHE_DIR=$shared
cache=$shared/appliances
mkdir -p "$cache"

# fstests from a git repository (file:// URL): the clone path. The
# repository is made once (a fixed date, so the commit is the same every time).
# Its Makefile's build says who ran it: fstests' make never runs as root.
repo=$shared/test-fstests-repo-make
if [ ! -d "$repo/.git" ]; then
	rm -rf "$repo"
	cp -a "$mini" "$repo"
	printf 'all:\n\tid -u >built-by\n' >"$repo/Makefile"
	git -C "$repo" init -q
	git -C "$repo" add -A
	GIT_AUTHOR_DATE=2025-01-01T00:00:00Z GIT_COMMITTER_DATE=2025-01-01T00:00:00Z \
		git -C "$repo" -c user.name=t -c user.email=t@example.org commit -q -m mini
fi
head=$(git -C "$repo" rev-parse HEAD)
url=file://$repo
tiny=(--fstests-src "$url" --packages mount,make)
if [ "$("$FSWB" appliance build --dry-run --json "${tiny[@]}" 2>/dev/null | jq -r .cached)" = true ]; then
	cold=false
	echo "# the tiny appliance is cached: reusing it"
else
	cold=true
fi

# ---- two builds at once: one builds, the other waits and reuses ----
start=$SECONDS
"$FSWB" appliance build "${tiny[@]}" >"$T/a.out" 2>"$T/a.err" &
pa=$!
# the second starts once the first has begun (and holds the build's lock)
for _ in $(seq 1 100); do
	[ -s "$T/a.err" ] && break
	sleep 0.1
done
"$FSWB" appliance build "${tiny[@]}" >"$T/b.out" 2>"$T/b.err" &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
secs=$((SECONDS - start))
check "the first build succeeds" test "$ra" -eq 0
check "the second build succeeds" test "$rb" -eq 0
if $cold; then
	check "one of them built it" grep -q "built$" <(cat "$T/a.out" "$T/b.out")
	check "the other reused it" grep -q "reused" <(cat "$T/a.out" "$T/b.out")
	check "the one that waited said so" grep -q "waiting for another fswb" <(cat "$T/a.err" "$T/b.err")
	echo "# tiny appliance: built in ${secs}s"
else
	check "both reused the cached one" test "$(grep -c reused "$T/a.out" "$T/b.out" | grep -c ':1')" = 2
fi
id=$(sed -n 's/^appliance \([0-9a-f]*\) .*/\1/p' "$T/a.out")
dir=$(ls -d "$cache/$id"*[0-9a-f] 2>/dev/null | head -1)
img=$dir/root.img
check "the image is in the cache" test -f "$img"
check "one build log" test -f "$dir/build.log"
leftovers() { ls "$1" | grep -E "^$2[0-9a-f]*\.(tmp|old)\."; }
check "nothing half-built is left" test -z "$(leftovers "$cache" "$id")"

# what is in it, read without mounting
check "the image is a clean ext4 filesystem" e2fsck -fn "$img"
check "its label is fswb-root" grep -qx fswb-root <(e2label "$img")
ls_agent=$(debugfs -R "stat /usr/local/sbin/fswb-agent" "$img" 2>/dev/null)
check "fswb-agent is installed, mode 0755" grep -q "Mode:  0755" <<<"$ls_agent"
check "fswb-agent belongs to root" grep -qE "User: +0 +Group: +0" <<<"$ls_agent"
check "fswb-agent is the one in the tree" \
	cmp <(debugfs -R "cat /usr/local/sbin/fswb-agent" "$img" 2>/dev/null) "$SRCDIR/src/agent/fswb-agent"
check "fswb-init is installed, mode 0755" \
	grep -q "Mode:  0755" <(debugfs -R "stat /usr/local/sbin/fswb-init" "$img" 2>/dev/null)
passwd=$(debugfs -R "cat /etc/passwd" "$img" 2>/dev/null)
for u in fsgqa fsgqa2 123456-fsgqa; do
	check "user $u exists" grep -q "^$u:" <<<"$passwd"
done
check "group fsgqa exists" grep -q "^fsgqa:" <(debugfs -R "cat /etc/group" "$img" 2>/dev/null)
check "fstests is in /opt/fstests, check executable (0755)" \
	grep -q "Mode:  0755" <(debugfs -R "stat /opt/fstests/check" "$img" 2>/dev/null)
check "/opt/fstests is the commit asked for" \
	cmp <(debugfs -R "cat /opt/fstests/check" "$img" 2>/dev/null) <(git -C "$repo" show HEAD:check)
check "fstests' make ran as nobody, not root" \
	test "$(debugfs -R "cat /opt/fstests/built-by" "$img" 2>/dev/null)" = 65534
check "and what it built belongs to root in the image" \
	grep -qE "User: +0 +Group: +0" <(debugfs -R "stat /opt/fstests/built-by" "$img" 2>/dev/null)
check "/opt/fstests has no .git" \
	bash -c "! debugfs -R 'stat /opt/fstests/.git' '$img' 2>/dev/null | grep -q Inode"
check "mount is in (the package list was used)" \
	grep -q "Inode" <(debugfs -R "stat /usr/bin/mount" "$img" 2>/dev/null)
check "/etc/fswb-appliance records the commit" \
	grep -q "FSWB_FSTESTS_REVISION=$head" <(debugfs -R "cat /etc/fswb-appliance" "$img" 2>/dev/null)
j=$("$FSWB" appliance list --json)
check "list shows it, with its fstests commit" \
	test "$(jq -r --arg id "$id" '.[] | select(.id == $id) | .fstests_rev' <<<"$j")" = "$head"

# ---- reuse ----
t0=$(date +%s%N)
out=$("$FSWB" appliance build "${tiny[@]}" 2>/dev/null)
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
check "the same inputs reuse it" grep -q "^appliance $id reused" <<<"$out"
check "reusing takes under a second (${ms} ms)" test "$ms" -lt 1000
echo "# reuse: ${ms} ms; image $(du -h --apparent-size "$img" | cut -f1) apparent, $(du -h "$img" | cut -f1) used"

# ---- a failing build keeps nothing but its log (in a cache of its own) ----
out=$(FSWB_CACHE_DIR=$T/fcache "$FSWB" appliance build --fstests-src "$mini" \
	--packages no-such-package-fswb 2>&1)
rc=$?
check "a failing build exits 2" test "$rc" -eq 2
check "its message has mmdebstrap's last lines" grep -q "no-such-package-fswb" <<<"$out"
failed=$(sed -n 's/^the whole log: //p' <<<"$out")
check "its log is kept" test -s "$failed"
check "nothing half-built is left after a failure" \
	test -z "$(leftovers "$T/fcache/appliances" "")"
check "and no appliance" test -z "$(ls "$T/fcache/appliances" | grep -vE '\.(lock|failed\.log)$')"

# ---- an interrupted rebuild keeps the old appliance and nothing else ----
# (and a build clears what a fswb killed outright left of another one)
sh -c 'exit 0' &
deadpid=$!
wait $deadpid
zero=0000000000000000000000000000000000000000000000000000000000000000
mkdir -p "$cache/$zero.tmp.$deadpid/root/etc"
: >"$cache/$zero.tmp.$deadpid/root/etc/passwd"
"$FSWB" appliance build --force "${tiny[@]}" >"$T/i.out" 2>"$T/i.err" &
pi=$!
# Ctrl-C once the bootstrap is writing the new root filesystem
for _ in $(seq 1 200); do
	grep -q "bootstrap" "$T/i.err" 2>/dev/null &&
		[ -n "$(ls -A "$cache"/*.tmp."$pi"/root 2>/dev/null)" ] && break
	sleep 0.2
done
kill -INT $pi
wait $pi
ri=$?
check "an interrupted build exits 2" test "$ri" -eq 2
check "it says it was interrupted" grep -q "interrupted; nothing of it was kept" "$T/i.err"
check "nothing half-built is left after an interrupt" test -z "$(leftovers "$cache" "$id")"
check "nothing is left mounted" bash -c "! grep -q '$cache/$id' /proc/self/mounts"
check "no mmdebstrap is left running" bash -c "! pgrep -f '[m]mdebstrap --mode.*$id' >/dev/null"
check "the old appliance is still there" e2fsck -fn "$img"
check "the leftover of a killed fswb was removed" test ! -e "$cache/$zero.tmp.$deadpid"
rm -f "$cache/$zero.lock"
out=$("$FSWB" appliance build "${tiny[@]}" 2>/dev/null)
check "and is still reused" grep -q "^appliance $id reused" <<<"$out"

# ---- unshare mode (as root: a private mount namespace) and debootstrap ----
if [ "$(id -u)" -eq 0 ]; then
	for mode in unshare debootstrap; do
		# another package list for unshare, so that it is its own appliance
		pk=mount,make
		[ "$mode" = unshare ] && pk=mount,make,bc
		start=$SECONDS
		out=$(FSWB_APPLIANCE_MODE=$mode "$FSWB" appliance build --json \
			--fstests-src "$url" --packages "$pk" 2>"$T/$mode.err")
		rc=$?
		check "a build in $mode mode succeeds" test "$rc" -eq 0
		[ "$rc" -eq 0 ] || { fail "$mode build" "$(tail -20 "$T/$mode.err")"; continue; }
		[ "$(jq -r .reused <<<"$out")" = true ] || echo "# $mode: built in $((SECONDS - start))s"
		mimg=$(jq -r .image <<<"$out")
		check "$mode: a clean image" e2fsck -fn "$mimg"
		check "$mode: fswb-init belongs to root, mode 0755" bash -c \
			"debugfs -R 'stat /usr/local/sbin/fswb-init' '$mimg' 2>/dev/null | grep -q 'Mode:  0755' &&
			 debugfs -R 'stat /usr/local/sbin/fswb-init' '$mimg' 2>/dev/null | grep -qE 'User: +0 +Group: +0'"
		check "$mode: the root directory is 0755" \
			grep -q "Mode:  0755" <(debugfs -R "stat /" "$mimg" 2>/dev/null)
		check "$mode: fstests' make ran as nobody" \
			test "$(debugfs -R "cat /opt/fstests/built-by" "$mimg" 2>/dev/null)" = 65534
		check "$mode: user 123456-fsgqa exists" \
			grep -q "^123456-fsgqa:" <(debugfs -R "cat /etc/passwd" "$mimg" 2>/dev/null)
		check "$mode: nothing half-built is left" \
			test -z "$(leftovers "$cache" "$(jq -r .key <<<"$out")")"
		check "$mode: no package lists left in the image" bash -c \
			"! debugfs -R 'ls /var/lib/apt/lists' '$mimg' 2>/dev/null | grep -q _Packages"
	done
	check "debootstrap's appliance says so" \
		test "$("$FSWB" appliance list --json | jq -r '[.[] | select(.tool == "debootstrap")] | length')" -ge 1
fi

# ---- removing: on a copy of the cache entry, in a cache of its own ----
export FSWB_CACHE_DIR=$T/cache
mkdir -p "$T/cache/appliances/$(basename "$dir")"
cp "$dir/appliance.json" "$T/cache/appliances/$(basename "$dir")/"
: >"$T/cache/appliances/$(basename "$dir")/root.img"
rdir=$T/cache/appliances/$(basename "$dir")
check "the copy is listed" test "$("$FSWB" appliance list --json | jq -r '.[0].id')" = "$id"
out=$("$FSWB" appliance rm "${id:0:8}")
check "rm by a prefix of the id" grep -q "removed ${id:0:8}" <<<"$out"
check "rm removed the directory" test ! -e "$rdir"
check "list is empty again" test "$("$FSWB" appliance list --json | jq length)" = 0
: >"$T/cache/appliances/${id}0000.failed.log"
out=$("$FSWB" appliance rm --all)
check "rm --all with nothing left" grep -q "removed 0 appliances" <<<"$out"
check "rm --all removed a failed build's log" test ! -e "$T/cache/appliances/${id}0000.failed.log"

done_testing
