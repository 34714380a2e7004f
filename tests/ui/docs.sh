#!/usr/bin/env bash
# The docs browser in tmux at 80x24 and 200x60: '?' on each wizard step opens
# its page, the index, a page with its headings, code and hidden comments,
# following a link to another page and back, find on a page, search across
# the pages, the links panel, a link out shown to copy (no display) or handed
# to xdg-open (a display), re-wrapping on resize, LANG=C in plain ASCII and
# NO_COLOR without colours.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tmux-lib.bash"
ui_setup

# screen_lacks TEXT: the screen does not show TEXT
screen_lacks() { ! ui_screen | grep -qF -- "$1"; }
# the screen with its attributes (SGR sequences)
screen_sgr() { _tmux capture-pane -e -p -t "$UI_SESSION"; }
# whether the screen uses a colour (SGR 30-37, 40-47, 90-97, 38;5 / 48;5)
has_colour() { screen_sgr | perl -ne 'while (/\e\[([0-9;]*)m/g) { for (split /;/, $1) { $c = 1 if /^(3[0-8]|4[0-8]|9[0-7])$/ } } END { exit($c ? 0 : 1) }'; }
NODISPLAY=(DISPLAY= WAYLAND_DISPLAY=)

# ---- from the wizard: '?' on every step opens its page ----
ui_start 80 24 "${NODISPLAY[@]}"
check_screen "welcome" "step 1 of 6"
ui_keys '?'
check_screen "welcome ?: what fstests is" "fswb · docs · What fstests is"
check_screen "welcome ?: the page from its start" "fstests is the regression test suite"
ui_keys Escape
check_screen "Esc goes back to the welcome" "step 1 of 6"
step=2
for want in "3. What the run does" "Configuration and sections" "Where tests run" \
	"4. Choosing what to run"; do
	ui_keys Enter
	check_screen "step $step" "step $step of 6" 20
	ui_keys '?'
	check_screen "step $step ?: its page ($want)" "$want"
	check "step $step ?: no missing page or heading" \
		bash -c "$(declare -f ui_screen _tmux); UI_SOCK=$UI_SOCK UI_SESSION=$UI_SESSION; ! ui_screen | grep -qE 'there is no (docs page|heading)'"
	ui_keys Escape
	check_screen "step $step again after Esc" "step $step of 6"
	step=$((step + 1))
done
ui_stop

# ---- the index ----
ui_start 80 24 "${NODISPLAY[@]}" -- --docs
check_screen "index" "fswb · docs"
ui_settle; ui_screen >"$T/index.txt"
check "index: README's introduction" grep -qF "These pages take you from never having run fstests" "$T/index.txt"
check "index: the first page, picked" grep -qE "▸ 1 +What fstests is +what-is-fstests.md" "$T/index.txt"
check "index: reading order" bash -c "grep -nE '^ +(▸ )?[0-9] ' '$T/index.txt' | sed 's/.*[0-9]  *//' | awk '{print \$NF}' | tr '\n' ' ' | grep -qF 'what-is-fstests.md first-run.md backends.md reading-failures.md writing-a-test.md before-you-send.md glossary.md links.md'"
check "index: key bar" grep -qE "Enter open +s search all pages" "$T/index.txt"

# ---- a page ----
ui_keys Down Enter
check_screen "Enter opens the page" "fswb · docs · Your first run"
ui_settle; ui_screen >"$T/first-run.txt"
check "page: heading underlined" grep -qE "^  ═{14}$" "$T/first-run.txt"
check "page: numbered heading" grep -qF "1. Install, build, run" "$T/first-run.txt"
check "page: code block indented" grep -qE "^      make deps fswb" "$T/first-run.txt"
check "page: no HTML comment" bash -c "! grep -qE 'doctest|<!--' '$T/first-run.txt'"
ui_keys G
check_screen "page end: the links list" "[1] backends.md"

# follow a link to another page, and come back
ui_keys g Tab
check_screen "Tab picks the first link" "the backends page [1]"
ui_keys Enter
check_screen "Enter follows it to another page" "fswb · docs · Where tests run"
ui_keys q
check_screen "q comes back to the first page" "fswb · docs · Your first run"

# find on the page
ui_keys g
check_screen "g: the top of the page" "first-run.md  0%"
# where the page is scrolled to, in percent, from the title line
at_percent() { ui_screen | sed -n '1s/.*first-run\.md  *\([0-9]*\)%.*/\1/p'; }
ui_keys / "Reading the summary" Enter
check_screen "find: the heading found" "5. Reading the summary"
ui_settle
heading=$(at_percent)
check "find: scrolled to it (at ${heading:-?}%)" test "${heading:-0}" -gt 0
ui_keys g
check_screen "g: the top again" "first-run.md  0%"
ui_keys / summary Enter n
ui_settle
second=$(at_percent)
check "find: n goes on to the next match (at ${second:-?}%, before the heading)" \
	test "${second:-0}" -gt 0 -a "${second:-0}" -lt "${heading:-0}"
ui_keys n
check_screen "find: and n again to the heading" "5. Reading the summary"
ui_keys / n o - s u c h - w o r d Enter
check_screen "find: not found says so" "'no-such-word' is not on this page"

# search every page
ui_keys Escape
check_screen "back in the index" "▸ 2"
ui_keys s S C R A T C H Enter
check_screen "search all: results" "matches in"
ui_settle; ui_screen >"$T/search.txt"
check "search all: a match with its page" grep -qE "What fstests is +.*SCRATCH" "$T/search.txt"
check "search all: several pages" grep -qE "matches in [2-9] pages" "$T/search.txt"
ui_keys Enter
check_screen "search all: Enter opens the page" "fswb · docs · What fstests is"
check_screen "search all: at the match" "SCRATCH"
ui_keys Escape Escape
ui_keys s z z q q x Enter
check_screen "search all: nothing found" "No page mentions 'zzqqx'."
ui_stop

# ---- links out: the links panel, no display: shown to copy ----
ui_start 80 24 "${NODISPLAY[@]}" -- --docs links.md
check_screen "links page" "fswb · docs · Links"
check_screen "links: numbered in the text" "fstests git repository [1]"
ui_keys l
check_screen "links panel" "links of Links"
check_screen "links panel: the URL" "https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git"
ui_keys Enter
check_screen "no display: the link to copy" "No display to open a browser on: copy the link"
ui_keys x
check_screen "any key closes the box" "links of Links"
ui_keys Escape Tab Enter
check_screen "from the page too" "No display to open a browser on"
ui_stop

# ---- a display: xdg-open gets the URL (argv, no shell) ----
mkdir -p "$T/bin"
cat >"$T/bin/xdg-open" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T/opened"
EOF
chmod +x "$T/bin/xdg-open"
ui_start 80 24 DISPLAY=:99 "PATH=$T/bin:$PATH" -- --docs links.md
check_screen "display: links page" "fstests git repository [1]"
ui_keys Tab Tab Enter
for _ in $(seq 50); do [ -s "$T/opened" ] && break; sleep 0.1; done
check "display: xdg-open got the URL" grep -qxF "https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git/tree/README" "$T/opened"
check_screen "display: says so" "opening https://git.kernel.org"
ui_stop

# ---- a page that is not there ----
ui_start 80 24 -- --docs no-such-page
check_screen "unknown page: the index" "fswb · docs"
check_screen "unknown page: says so" "there is no docs page 'no-such-page.md'"
ui_stop

# ---- 200x60, and re-wrapping on resize ----
ui_start 200 60 "${NODISPLAY[@]}" -- --docs what-is-fstests.md
check_screen "200x60: page" "fswb · docs · What fstests is"
ui_settle; ui_screen >"$T/wide.txt"
check "200x60: text uses the room (lines over 80 columns)" bash -c "awk 'length > 82' '$T/wide.txt' | grep -q ."
check "200x60: but stays readable (at most 100 columns of text)" bash -c "! tail -n +3 '$T/wide.txt' | grep -v '─' | perl -CS -ne 'print if length > 104' | grep -q ."
check "200x60: a table" grep -qE "auto +│ the regression suite" "$T/wide.txt"
_tmux resize-window -t "$UI_SESSION" -x 60 -y 24
check_screen "resize: re-wrapped to 60" "What fstests is"
check "resize: first paragraph re-wrapped" ui_wait "fstests is the regression test suite of the Linux" 3
ui_keys i
check_screen "i: the index" "▸ 1"
ui_stop

ui_start 200 60 "${NODISPLAY[@]}" -- --docs
check_screen "200x60: index" "8   Links"
ui_stop

# ---- LANG=C: ASCII only ----
ui_start 80 24 LANG=C LC_ALL=C "${NODISPLAY[@]}" -- --docs
check_screen "ascii: index" "fswb - docs"
check_screen "ascii: the pick mark" "> 1"
ui_keys 4
check_screen "ascii: page by number" "fswb - docs - Reading a failure"
ui_settle; ui_screen >"$T/ascii.txt"
check "ascii: '=' under the title" grep -qE "^  =+$" "$T/ascii.txt"
check "ascii: '-' rules" grep -qE "^  -+$" "$T/ascii.txt"
check "ascii: table" grep -qE "^  file +\| what it is" "$T/ascii.txt"
ui_keys Space
check_screen "ascii: '*' bullets" "  * NNN."
check "ascii: nothing but ASCII on screen" bash -c "$(declare -f ui_screen _tmux); UI_SOCK=$UI_SOCK UI_SESSION=$UI_SESSION; ! ui_screen | LC_ALL=C grep -qP '[^\x00-\x7f]'"
ui_stop

# ---- NO_COLOR ----
ui_start 80 24 "${NODISPLAY[@]}" -- --docs first-run.md
check_screen "colour: page" "make deps fswb"
check "colour: colours used" has_colour
ui_stop
ui_start 80 24 NO_COLOR=1 "${NODISPLAY[@]}" -- --docs first-run.md
check_screen "NO_COLOR: page" "make deps fswb"
check "NO_COLOR: no colour at all" bash -c "$(declare -f screen_sgr has_colour _tmux); UI_SOCK=$UI_SOCK UI_SESSION=$UI_SESSION; ! has_colour"
check "NO_COLOR: still bold headings" bash -c "$(declare -f screen_sgr _tmux); UI_SOCK=$UI_SOCK UI_SESSION=$UI_SESSION; screen_sgr | grep -qP '\e\[1m.*Your first run'"
ui_keys q
check "q from the only view ends fswb" ui_gone
ui_stop

# the program has ended (above): its sanitizer reports, if any, are written
check "no sanitizer reports" sanitizers_clean
done_testing
