#!/usr/bin/env bash
# The workbench with Compute Engine, end to end: the real binary in tmux, in
# a network namespace with the Compute Engine double (tests/e2e/gce-lib.bash),
# whose instances are QEMU guests. The tests are picked first, so the
# backend step can say what the run costs for as long as it should take;
# the key, zone and bucket typed (o), the cost confirmed by typing yes; a
# run of one test on an instance, live; the choices remembered; a run of
# fswb run --detach, followed from the history to its end; then what fswb
# keeps in the project (its image) shown with x, and deleted with it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../ui/tmux-lib.bash"
. "$(dirname "$0")/gce-lib.bash"

ui_setup
gce_setup "the workbench with Compute Engine"
UI_BIN=ip
UI_ARGS=(netns exec "$NETNS" "$FSWB" tui)
ENVS=(FSWB_CACHE_DIR="$FSWB_CACHE_DIR" FSWB_GCE_COMPUTE_URL="$FSWB_GCE_COMPUTE_URL"
	FSWB_GCE_STORAGE_URL="$FSWB_GCE_STORAGE_URL" FSWB_GCE_POLL_MS="$FSWB_GCE_POLL_MS"
	FSWB_GCE_INSTANCE_STORAGE_URL="$FSWB_GCE_INSTANCE_STORAGE_URL"
	FSWB_GCE_RETRY_S="$FSWB_GCE_RETRY_S"
	FSWB_GCE_INSTANCE_COMPUTE_URL="$FSWB_GCE_INSTANCE_COMPUTE_URL"
	FSWB_GCE_UPLOAD_S="$FSWB_GCE_UPLOAD_S")

ui_start 120 40 "${ENVS[@]}"
check_screen "welcome" "step 1 of 6"
ui_keys 5
check_screen "tests step" "step 5 of 6"
ui_pick_mini_test generic/001
ui_keys 4
check_screen "backend step" "step 4 of 6"
ui_keys Down Down
check_screen "gce is offered" "Compute Engine"
check_screen "... not usable before a zone and a bucket are named" \
	"not usable yet: no zone and bucket named" 20
ui_keys o C-u "key=$T/key.json zone=us-test1-a bucket=fswb-bkt" Enter
check_screen "the key, zone and bucket typed: ready" \
	"ready: project fswb-test, zone us-test1-a, bucket fswb-bkt" 30
check_screen "the cost to confirm" "to confirm: Compute Engine: 1 e2-standard-2 instance"
check_screen "... for as long as the run should take" "it is expected to take"
ui_keys Enter
check_screen "Enter does not go on before it is confirmed" "waits for you to confirm"
ui_keys a yes Enter
# asked again: "checking..." until its answer, which has nothing to confirm
confirmed() {
	local s
	s=$(ui_screen)
	grep -q "ready: project fswb-test" <<<"$s" && ! grep -qE "checking\.\.\.|to confirm:" <<<"$s"
}
for _ in $(seq 1 60); do confirmed && break; sleep 0.5; done
check "confirmed: ready, nothing left to confirm" confirmed
ui_keys Enter
check_screen "Enter takes it: the tests step" "step 5 of 6"
ui_keys 6
check_screen "review again" "step 6 of 6"
check_screen "review: on Compute Engine" "gce"
check_screen "review: the command line accepts the cost" "cost=ok"
ui_keys Enter
check_screen "the run ends" "the run has ended" 1200
check_screen "generic/001 ran on the instance" "generic/001"
ui_keys q
ui_stop
run=$(last_run)
check "run.json: generic/001 passed" \
	test "$(jq -r '.sections[].tests[] | select(.test == "generic/001") | .status' "$run/run.json")" = pass
last=$(find "$FSWB_HOME" -name last-plan.json | head -n 1)
check "the plan is remembered: gce and the bucket; the cost is asked again" test \
	"$(jq -r '"\(.backend.name) \(.backend.options.bucket) \(.backend.options.cost)"' "$last")" = \
	"gce fswb-bkt null"
check "no instance is left" test -z "$(instances)"
check "the image stays for the next run" test "$(state | jq '.images | length')" -eq 1

# a detached run: the history offers to follow it; Enter follows it to its end
NS timeout 900 "$FSWB" run "${GCE[@]}" -o cost=ok --shards 1 -c ext4/4k --detach \
	--fstests-src "$MINI" generic/001 generic/006 >"$T/out" 2>&1
check "fswb run --detach returns, its instance running ($(tail -n 2 "$T/out" | tr '\n' ' '))" \
	test "$(instances | wc -l)" -eq 1
drun=$(last_run)
ui_start 120 40 "${ENVS[@]}" -- --history
check_screen "the history shows it as detached, to follow" \
	"detached: its machines run on; Enter follows it" 30
ui_keys Enter
check_screen "Enter follows it to its end" "the run has ended" 900
check_screen "... generic/006 failed" "generic/006"
ui_keys q
ui_stop
check "run.json: generic/001 passed, generic/006 failed" test \
	"$(jq -r '[.sections[].tests[] | "\(.test)=\(.status)"] | sort | join(" ")' "$drun/run.json")" = \
	"generic/001=pass generic/006=fail"
for _ in $(seq 1 120); do [ -z "$(instances)" ] && break; sleep 0.5; done
check "its instance deleted itself" test -z "$(instances)"

# what fswb keeps in the project is shown in the wizard and deleted with x
ui_start 120 40 "${ENVS[@]}"
check_screen "again: welcome" "step 1 of 6"
ui_keys 4
check_screen "again: backend step" "step 4 of 6"
ui_keys Down Down
check_screen "its image is shown as kept, with x" "kept: 1 image of fswb's" 30
check_screen "the cost is asked again" "to confirm: Compute Engine"
ui_keys x no Enter
check_screen "'no' deletes nothing" "nothing removed"
check "... the image is still there" test "$(state | jq '.images | length')" -eq 1
ui_keys x yes Enter
check_screen "yes deletes it" "deleted 1 image of fswb's" 60
check "... it is gone from the project" test "$(state | jq '.images | length')" -eq 0
check "... and the wizard says nothing is kept" eval '! ui_screen | grep -q "kept: "'
ui_stop
check "no sanitizer report" sanitizers_clean
done_testing
