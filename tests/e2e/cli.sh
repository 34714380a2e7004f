#!/usr/bin/env bash
# The command line: help, version, errors that suggest, profiles, plans, and
# the man page covering every option --help shows.
. "$(dirname "$0")/../lib.sh"

out=$("$FSWB" --version)
check "--version prints the version" grep -qE '^fswb [0-9]+\.[0-9]+\.[0-9]+$' <<<"$out"

# An installed fswb (PREFIX/bin/fswb) reads PREFIX/share/fswb, not the tree it
# was built in, though that tree is still here; the one in the build
# directory reads the tree.
P=$T/prefix
mkdir -p "$P/bin" "$P/share/fswb"
cp "$(readlink -f "$FSWB")" "$P/bin/fswb"
cp -R "$SRCDIR/profiles" "$P/share/fswb/"
sed -e 's/^description = .*/description = the copy in the installed share directory/' -e '/^aliases/d' \
	"$SRCDIR/profiles/fs/ext4/4k.conf" >"$P/share/fswb/profiles/fs/ext4/installed.conf"
out=$(env -u FSWB_DATADIR "$P/bin/fswb" profiles 2>&1)
check "an installed fswb reads PREFIX/share/fswb" grep -q '^  ext4/installed .*installed share' <<<"$out"
out=$(env -u FSWB_DATADIR "$FSWB" profiles 2>&1)
check "the fswb in the build directory reads the tree" \
	bash -c '! grep -q "ext4/installed" <<<"$1" && grep -q "^  ext4/4k " <<<"$1"' _ "$out"

help=$("$FSWB" --help)
check "--help lists run" grep -q '^  run ' <<<"$help"
check "--help lists profiles" grep -q '^  profiles ' <<<"$help"

err=$("$FSWB" rnu 2>&1)
rc=$?
check "unknown command exits 2" test "$rc" -eq 2
check "unknown command suggests run" grep -q "did you mean 'run'" <<<"$err"

err=$("$FSWB" plan --dump --cpuss 2 2>&1)
check "unknown option suggests --cpus" grep -q "unknown option '--cpuss' (did you mean '--cpus'?)" <<<"$err"

err=$("$FSWB" plan --dump -c ext4/4kk 2>&1)
check "unknown config suggests ext4/4k" grep -q "did you mean 'ext4/4k'" <<<"$err"

err=$("$FSWB" plan --dump -c 2>&1)
check "an option without its value says so" grep -q "option '-c' needs a value" <<<"$err"
err=$("$FSWB" kernel config --kernel 2>&1)
check "a kernel option without its value says so" grep -q "option '--kernel' needs a value" <<<"$err"

json=$("$FSWB" plan generic/001 -c xfs/4k --cpus 1 --dump)
check "options may follow the tests" grep -q '"xfs/4k"' <<<"$json"
check "the test before the options is kept" grep -q '"generic/001"' <<<"$json"

err=$("$FSWB" plan --dump -c ext4/4k generic/001 xfs/001 2>&1)
rc=$?
check "a test of another filesystem is refused (exit 2)" test "$rc" -eq 2
check "it names the test and a configuration for it" \
	grep -q "'xfs/001' is a test for xfs, and no chosen configuration is xfs.*-c xfs/4k" <<<"$err"

json=$("$FSWB" plan --shards 2 --dump)
check "--shards 2 is kept in the plan" grep -q '"shards": 2,' <<<"$json"
json=$("$FSWB" plan --dump)
check "without --shards the host decides" grep -q '"shards": "auto",' <<<"$json"
err=$("$FSWB" plan --shards 0 --dump 2>&1)
rc=$?
check "--shards 0 is refused (exit 2)" test "$rc" -eq 2
check "it says what --shards takes" grep -q -- "--shards: '0' is not a whole number from 1 to 64" <<<"$err"
printf '{"version": 1, "shards": "many"}\n' >"$T/shards.json"
err=$("$FSWB" plan --plan "$T/shards.json" --dump 2>&1)
check "a plan file with shards \"many\" is refused, naming the field" \
	grep -q "field 'shards': expected \"auto\" or a whole number from 1 to 64" <<<"$err"

err=$("$FSWB" plan --dump --cpus 2 --mem lots 2>&1)
check "bad size names the option" grep -q -- "--mem: 'lots' is not a size" <<<"$err"

list=$("$FSWB" profiles)
for cfg in ext4/4k ext4/1k xfs/4k xfs/1k btrfs/default f2fs/default; do
	check "profiles lists $cfg with a description" grep -qE "^  $cfg +[[:alnum:]]" <<<"$list"
done
check "profiles lists the smoke set" grep -qE '^  smoke +[A-Z]' <<<"$list"

show=$("$FSWB" profiles show xfs/1k)
check "profiles show gives MKFS_OPTIONS" grep -qE '^  MKFS_OPTIONS +.*-b size=1024' <<<"$show"
check "profiles lists ext4/all" grep -qE '^  ext4/all +ext4/4k ext4/1k ' <<<"$list"

# -c takes the names xfstests-bld users type
json=$("$FSWB" plan --dump -c ext4/default,xfs,4k,bigalloc generic/001)
check "-c ext4/default, xfs, 4k and bigalloc name ext4/4k, xfs/4k and ext4/bigalloc_4k" \
	test "$(jq -c .configs <<<"$json")" = '["ext4/4k","xfs/4k","ext4/bigalloc_4k"]'
json=$("$FSWB" plan --dump -c all generic/001)
check "-c all is ext4's all.list" test "$(jq '.configs | length' <<<"$json")" -eq 11
err=$("$FSWB" plan --dump -c nosuchfs generic/001 2>&1)
check "-c nosuchfs suggests nothing far-fetched" bash -c "! grep -q 'did you mean' <<<\"\$1\"" _ "$err"
check "-c nosuchfs lists the filesystems there are" \
	grep -qF "unknown configuration 'nosuchfs'; fswb has configurations for btrfs, exfat, ext2, ext3, ext4, f2fs, nfs, overlay, tmpfs, udf, vfat, xfs" <<<"$err"
json=$("$FSWB" plan --dump -c ext4 '*/001' 'generic/00?')
check "test patterns as check takes them" grep -q '"\*/001"' <<<"$json"

json=$("$FSWB" plan -c ext4/4k,xfs/1k -g quick -x dangerous -e generic/002 --cpus 1 --mem 1G --dump generic/001)
check "plan --dump is JSON with the configs" grep -q '"xfs/1k"' <<<"$json"
check "plan --dump keeps the group" grep -q '"quick"' <<<"$json"
check "plan --dump keeps the mem" grep -q '"mem": "1 GiB"' <<<"$json"
printf '%s\n' "$json" >"$T/plan.json"
again=$("$FSWB" plan --plan "$T/plan.json" --dump)
check "a dumped plan loads back unchanged" test "$json" = "$again"
changed=$("$FSWB" plan --plan "$T/plan.json" --mem 2G --dump)
check "options refine a loaded plan" grep -q '"mem": "2 GiB"' <<<"$changed"

err=$("$FSWB" run --fstests-src "$T/no-such-fstests" generic/001 2>&1)
rc=$?
check "an --fstests-src that does not exist and is no URL exits 2" test "$rc" -eq 2
check "and says what to give" grep -qF "fstests_src: '$T/no-such-fstests' does not exist and is not a git URL" <<<"$err"

# A guest's size against this host's (read here, whatever it is), refused before anything runs
cores=$(nproc)
mem_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
err=$("$FSWB" plan --dump --cpus $((cores + 1)) 2>&1)
rc=$?
check "more CPUs than this host's cores exits 2" test "$rc" -eq 2
check "and says the host's cores" grep -qE "^fswb: error: cpus: $((cores + 1)) per guest is more than this host's $cores cores?; give 1( to $cores)?\$" <<<"$err"
check "as many CPUs as the host's cores are taken" "$FSWB" plan --dump --cpus "$cores"
err=$("$FSWB" run --mem "${mem_kib}K" generic/001 2>&1)
rc=$?
check "run --mem of all this host's memory exits 2 at once" test "$rc" -eq 2
check "and gives the host's memory and the range" \
	grep -qE '^fswb: error: mem: .* per guest is more than this host can give: it has .* and keeps 1 GiB for itself; give 256 MiB to ' <<<"$err"
check "nothing was started" test ! -e "$FSWB_HOME/data/runs"
err=$("$FSWB" run --mem 100T generic/001 2>&1)
check "--mem 100T too" grep -q '^fswb: error: mem: 100 TiB per guest is more than this host can give' <<<"$err"
for m in 0 255M; do
	err=$("$FSWB" run --mem $m generic/001 2>&1)
	rc=$?
	check "--mem $m exits 2" test "$rc" -eq 2
	check "--mem $m says the range" grep -qE "^fswb: error: --mem: '$m' is less than a guest needs; give 256M (to .* )?.*fstests wants 2G\$" <<<"$err"
done
check "--mem 256M is taken" "$FSWB" plan --dump --mem 256M

printf '{"cpu": 2}\n' >"$T/bad.json"
err=$("$FSWB" plan --plan "$T/bad.json" --dump 2>&1)
check "a bad plan names the file and field" grep -q "bad.json: field 'cpu': unknown field" <<<"$err"

# Every long option in --help appears in the man page.
man=$SRCDIR/docs/fswb.1
missing=
for opt in $(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u); do
	esc=${opt//-/\\-}
	grep -qF -- "$esc" "$man" || missing="$missing $opt"
done
check "the man page covers every option in --help (missing:${missing:- none})" test -z "$missing"
for cmd in $(sed -n 's/^  \([a-z]\+\) .*/\1/p' <<<"$help" | sort -u); do
	check "the man page covers '$cmd'" grep -qE "^\.B(I)? \"?$cmd" "$man"
	# and every option of the command's own --help
	sub=$("$FSWB" "$cmd" --help 2>&1) || continue
	missing=
	for opt in $(grep -oE -- '--[a-z][a-z-]+' <<<"$sub" | sort -u); do
		grep -qF -- "${opt//-/\\-}" "$man" || missing="$missing $opt"
	done
	check "the man page covers the options of '$cmd' (missing:${missing:- none})" test -z "$missing"
done

# scripts/install-deps: each line of its lists is one package and a reason.
# A quote in a reason ends the shell string early and breaks `make deps`.
for distro in DEBIAN FEDORA; do
	body=$(sed -n "/^${distro}_PKGS='\$/,/^'\$/p" "$SRCDIR/scripts/install-deps" | sed '1d;$d')
	bad=$(grep -vE "^[a-z0-9][a-z0-9.+-]*\\|[^|']+$" <<<"$body" || true)
	check "install-deps: every $distro line is package|reason${bad:+ (bad: $bad)}" test -z "$bad"
	check "install-deps: the $distro list is not empty" test -n "$body"
done
# a backend without a shell refuses one before anything starts
out=$("$FSWB" shell --backend ssh -o host=box.example.org -o fstests=/root/xfstests 2>&1)
rc=$?
check "fswb shell on the ssh backend exits 2" test "$rc" -eq 2
check "... and says to log in to the machine" grep -q "gives no shell in its machine: log in to it yourself (ssh box.example.org)" <<<"$out"
out=$("$FSWB" run --backend ssh -o host=box.example.org --yes-destroy /dev/sdb -o hostkey=maybe 2>&1)
check "a bad hostkey= is refused with the choices" grep -q "hostkey='maybe': give strict" <<<"$out"

deps=$("$SRCDIR/scripts/install-deps" --list)
check "install-deps --list ends with the last package of the list" grep -q '^jq|' <<<"$(tail -1 <<<"$deps")"
check "install-deps --list gives every line" test "$(wc -l <<<"$deps")" -ge 30

done_testing
