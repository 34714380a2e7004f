#!/usr/bin/env bash
# The getting-started pages: every fswb command in a fenced code block runs
# (blocks marked "<!-- doctest: skip (why) -->" are checked instead: fswb run
# lines through fswb plan --dump with the same options, others through the
# command's --help naming each option), every link is well-formed and every
# relative link points at a file, and the index lists every page. The same
# checker is first run on broken pages to show it catches each kind.
. "$(dirname "$0")/../lib.sh"

DOCS=$SRCDIR/docs/getting-started
have_doctor=false
"$FSWB" doctor --help >/dev/null 2>&1 && have_doctor=true

# The fswb commands of the fenced blocks of a page: FILE<TAB>LINE<TAB>SKIP<TAB>ARGS.
commands() {
	awk -v file="$1" '
	function emit(seg) {
		sub(/^[ \t]*(\$[ \t]+)?/, "", seg)
		sub(/[ \t]+$/, "", seg)
		if (seg ~ /^(\.\/)?fswb([ \t]|$)/) {
			sub(/^(\.\/)?fswb[ \t]*/, "", seg)
			printf "%s\t%d\t%d\t%s\n", file, NR, skip, seg
		}
	}
	/^[ \t]*```/ {
		if (!infence) { infence = 1; skip = pending; pending = 0 }
		else infence = 0
		next
	}
	!infence && /<!--[ \t]*doctest:[ \t]*skip/ { pending = 1; next }
	!infence && /[^ \t]/ { pending = 0 }
	infence {
		line = $0
		sub(/[ \t]+#.*$/, "", line)   # a trailing comment
		n = split(line, segs, /&&|\|\||;|\|/)
		for (i = 1; i <= n; i++) emit(segs[i])
	}' "$1"
}

# Every link target of a page: FILE<TAB>LINE<TAB>TARGET.
links() {
	awk -v file="$1" '
	/^[ \t]*```/ { infence = !infence; next }
	infence { next }
	{
		s = $0
		while (match(s, /\]\([^)]*\)/)) {
			printf "%s\t%d\t%s\n", file, NR, substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH)
		}
		s = $0
		while (match(s, /<[a-z]+:\/\/[^>]*>/)) {
			printf "%s\t%d\t%s\n", file, NR, substr(s, RSTART + 1, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$1"
}

# Check a docs directory; prints "ok WHAT" and "FAIL WHAT: WHY" lines.
check_docs() {
	local dir=$1 f file line skip rest target args help opt rc out
	local -a cmd
	[ -f "$dir/README.md" ] || { echo "FAIL index: $dir/README.md is missing"; return; }
	for f in "$dir"/*.md; do
		[ "$(basename "$f")" = README.md ] && continue
		if links "$dir/README.md" | cut -f3 | sed 's/#.*//' | grep -qxF "$(basename "$f")"; then
			echo "ok index lists $(basename "$f")"
		else
			echo "FAIL index: README.md does not list $(basename "$f")"
		fi
	done
	for f in "$dir"/*.md; do
		while IFS=$'\t' read -r file line target; do
			where="$(basename "$file"):$line"
			case $target in
			*[[:space:]]* | "")
				echo "FAIL link $where: '$target' is empty or has a space" ;;
			http://* | https://* | git://*)
				if [[ $target =~ ^(https?|git)://[A-Za-z0-9.-]+\.[A-Za-z]{2,}(:[0-9]+)?(/[^[:space:]]*)?$ ]]; then
					echo "ok link $where $target"
				else
					echo "FAIL link $where: '$target' has no proper host"
				fi ;;
			*://* | mailto:* | javascript:*)
				echo "FAIL link $where: '$target' is not https, http or git" ;;
			\#*)
				echo "ok link $where $target" ;;
			*)
				if [ -e "$(dirname "$file")/${target%%#*}" ]; then
					echo "ok link $where $target"
				else
					echo "FAIL link $where: '$target' does not exist"
				fi ;;
			esac
		done < <(links "$f")
	done
	for f in "$dir"/*.md; do
		while IFS=$'\t' read -r file line skip rest; do
			where="$(basename "$file"):$line"
			if [[ $rest == *'$('* || $rest == *'`'* ]]; then
				echo "FAIL command $where: 'fswb $rest' uses command substitution"
				continue
			fi
			set -f
			eval "cmd=($rest)"
			set +f
			if [ ${#cmd[@]} -eq 0 ]; then
				# a bare fswb opens the workbench: it needs a terminal,
				# so check that the workbench is there
				if [ "$skip" = 1 ] && "$FSWB" tui --help >/dev/null 2>&1; then
					echo "ok command $where fswb (the workbench: tui --help works)"
				else
					echo "FAIL command $where: a bare 'fswb' opens the workbench; mark the block doctest: skip"
				fi
				continue
			fi
			if [ "${cmd[0]}" = doctor ] && ! $have_doctor; then
				echo "SKIP command $where fswb $rest	this fswb has no doctor command"
				continue
			fi
			if [ "$skip" = 1 ] && [ "${cmd[0]}" = run ]; then
				if out=$(cd "$T/work" && timeout 60 "$FSWB" plan --dump "${cmd[@]:1}" 2>&1 >/dev/null); then
					echo "ok command $where fswb $rest (plan accepts it)"
				else
					echo "FAIL command $where: 'fswb plan --dump ${cmd[*]:1}' fails: $out"
				fi
			elif [ "$skip" = 1 ]; then
				if ! help=$("$FSWB" "${cmd[0]}" --help 2>&1); then
					echo "FAIL command $where: 'fswb ${cmd[0]} --help' fails: $help"
					continue
				fi
				rc=ok
				for opt in "${cmd[@]:1}"; do
					case $opt in --*) ;; *) continue ;; esac
					opt=${opt%%=*}
					grep -qF -- "$opt" <<<"$help" || rc="'fswb ${cmd[0]} --help' has no $opt"
				done
				if [ "$rc" = ok ]; then
					echo "ok command $where fswb $rest (its options exist)"
				else
					echo "FAIL command $where: $rc"
				fi
			else
				out=$(cd "$T/work" && timeout 120 "$FSWB" "${cmd[@]}" 2>&1 >/dev/null)
				rc=$?
				# doctor's 1 is a finding about this host, not a broken command
				if [ $rc -eq 0 ] || { [ "${cmd[0]}" = doctor ] && [ $rc -eq 1 ]; }; then
					echo "ok command $where fswb $rest"
				else
					echo "FAIL command $where: 'fswb $rest' exits $rc: $out"
				fi
			fi
		done < <(commands "$f")
	done
}

mkdir -p "$T/work"

# The checker catches each kind of mistake.
bad=$T/bad
mkdir -p "$bad"
cat >"$bad/README.md" <<'MD'
# Index
- [one](one.md)
- [gone](missing.md)
MD
cat >"$bad/one.md" <<'MD'
[spaced](https://exa mple.org/x) [nohost](https:///path) [ftp](ftp://example.org/f)
[fine](https://example.org/page) <https://example.org/auto>

```sh
fswb profiles
fswb no-such-command
```

<!-- doctest: skip (boots a guest) -->
```sh
fswb run --no-such-option
fswb appliance build --no-such-flag
```
MD
echo "# not listed" >"$bad/unlisted.md"
res=$(check_docs "$bad")
expect() {
	if grep -qE -- "$2" <<<"$res"; then pass "checker: $1"; else fail "checker: $1" "$res"; fi
}
expect "an unlisted page fails" '^FAIL index: README.md does not list unlisted.md$'
expect "a link to a missing page fails" "^FAIL link README.md:3: 'missing.md' does not exist"
expect "a link with a space fails" "^FAIL link one.md:1: 'https://exa"
expect "a link without a host fails" "^FAIL link one.md:1: 'https:///path' has no proper host"
expect "an ftp link fails" "^FAIL link one.md:1: 'ftp://example.org/f' is not https"
expect "a good link passes" '^ok link one.md:2 https://example.org/page$'
expect "an autolink is checked" '^ok link one.md:2 https://example.org/auto$'
expect "a working command passes" '^ok command one.md:5 fswb profiles$'
expect "a failing command fails" "^FAIL command one.md:6: 'fswb no-such-command' exits 2"
expect "a skipped run is checked by plan" "^FAIL command one.md:11: 'fswb plan --dump --no-such-option' fails"
expect "a skipped command's options are checked" "^FAIL command one.md:12: 'fswb appliance --help' has no --no-such-flag"

# The real pages.
res=$(check_docs "$DOCS")
n=0
while IFS= read -r l; do
	case $l in
	ok\ *) pass "${l#ok }" ;;
	FAIL\ *) fail "${l#FAIL }" ;;
	SKIP\ *) l=${l#SKIP }; skip "${l%%$'\t'*}" "${l#*$'\t'}" ;;
	esac
	n=$((n + 1))
done <<<"$res"
check "the pages have commands and links" test "$(grep -c '^ok command' <<<"$res")" -ge 5 -a \
	"$(grep -c '^ok link' <<<"$res")" -ge 20
check "links.md links fstests' README on git.kernel.org" \
	grep -q 'https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git/tree/README)' "$DOCS/links.md"

done_testing
