#!/usr/bin/env bash
# The gce backend end to end, against a Compute Engine double (gcefake.py)
# on loopback in a network namespace this test makes: a service-account key
# (JWT checked), the image made from the appliance and the installed kernel,
# uploaded and imported, instances that are real QEMU guests booting it with
# OVMF, the job through the metadata server and the bucket, the agent's
# output through getSerialPortOutput. Cases: plan-time refusals; doctor; a
# sharded mini-fstests run on 2 instances with the token revoked and the API
# cut for a while in the middle; quota exceeded (with two shards and room
# for one: the run goes on with one); a spot instance preempted
# in the middle of a test (the test back in the queue); fswb killed, its
# instance found and deleted by the next start; a detached run that outlives
# fswb, collected by fswb results fetch; what fswb keeps deleted by doctor
# --forget.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gce-lib.bash"

why() { tail -n 3 "$T/out" "$T/err" 2>/dev/null | tr "\n" " "; }
statuses() { jq -r '.sections[].tests[] | "\(.test) \(.status)"' "$1/run.json" 2>/dev/null | sort; }
gce_setup "fswb run on the gce backend"

# 1. Plan time: the cost, accepted or not; what is missing.
err=$("$FSWB" run "${GCE[@]}" --fstests-src "$MINI" generic/001 2>&1)
check "without cost=ok the run is refused, with the estimate" \
	grep -q 'e2-standard-2 instance at about \$0.067 an hour.*it is expected to take .*give -o cost=ok' <<<"$err"
err=$("$FSWB" run --backend gce -o bucket=fswb-bkt -o cost=ok --fstests-src "$MINI" 2>&1)
check "without a zone the run is refused, naming it" grep -q 'needs -o zone=ZONE' <<<"$err"
err=$("$FSWB" run --backend gce -o zone=us-test1-a -o bucket=gs://x -o cost=ok 2>&1)
check "a gs:// bucket is refused with the form" grep -q "is not a bucket name.*no gs://" <<<"$err"

# 2. doctor: the key works, the zone and bucket are there, no instance of fswb's.
chmod 644 "$T/key.json"
out=$(NS "$FSWB" doctor "${GCE[@]}" 2>&1)
check "doctor refuses a key others can read, saying chmod 600" grep -q "chmod 600" <<<"$out"
chmod 600 "$T/key.json"
out=$(NS "$FSWB" doctor "${GCE[@]}" 2>&1)
check "doctor: project, zone and bucket, as the service account" \
	grep -q "project fswb-test, zone us-test1-a, bucket fswb-bkt, as $EMAIL" <<<"$out"
check "doctor: no instance of fswb's" grep -q "none in us-test1-a" <<<"$out"

# 3. A sharded run on 2 instances; in the middle the tokens are revoked and the
# API goes away for 8 s.
before=$(last_run)
NS timeout 1800 "$FSWB" run "${GCE[@]}" -o cost=ok --shards 2 -c ext4/4k \
	--fstests-src "$MINI" generic/001 generic/002 generic/005 generic/006 \
	>"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 1200); do
	[ "$(instances | wc -l)" -ge 1 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
check "an instance was started" test "$(instances | wc -l)" -ge 1
sleep 20
fake revoke-tokens >/dev/null
fake "outage?seconds=8" >/dev/null
wait "$pid"
rc=$?
run=$(last_run)
check "the sharded run finished, 1 failure expected (rc=$rc: $(why))" test "$rc" -eq 1
check "... it is a new run" test "$run" != "$before"
check "... with check's statuses ($(statuses "$run" | tr '\n' ' '))" test "$(statuses "$run")" = \
	$'generic/001 pass\ngeneric/002 pass\ngeneric/005 notrun\ngeneric/006 fail'
check "... generic/006's .out.bad came back through the bucket" \
	test -s "$run/results/ext4-4k/generic/006.out.bad"
check "... on two instances" \
	test "$(grep -o 'fswb-[0-9a-f]*-[01]-[0-9]*' "$run/events.jsonl" | sort -u | wc -l)" -ge 2
check "... the kernel log came through serial port 1" grep -qs "Linux version" "$run/kernel.log"
check "... the token was refreshed after it was revoked" \
	grep -q 'POST /token' "$T/gce/requests.log"
check "no instance is left" test -z "$(instances)"
left=$(state | jq -r '.objects[]?' 2>/dev/null | grep -v '^fswb-bkt/fswb/images/' | grep -c . || true)
check "no object of the sessions is left in the bucket ($left)" test "$left" -eq 0

# 4. No room (a quota): tried again with back-off, then refused with what to do.
fake "quota?count=50&kind=quotaExceeded" >/dev/null
FSWB_GCE_RETRY_S=12 NS timeout 600 "$FSWB" run "${GCE[@]}" -o cost=ok -c ext4/4k \
	--fstests-src "$MINI" generic/001 >"$T/out" 2>"$T/err"
check "no room: tried again, then said with what to do ($(why))" \
	eval 'grep -qs "no room for the instance now.*trying again in 5 s" "$(last_run)/console.log" &&
		grep -qs "no room for the instance: .*Quota .CPUS. exceeded.*run fewer shards" "$T/out" "$T/err"'
fake "quota?count=0" >/dev/null
# ... with room for one instance of two (the region's CPUs): the run goes on with one
fake "quota?count=0&cpus=2" >/dev/null
FSWB_GCE_RETRY_S=12 NS timeout 900 "$FSWB" run "${GCE[@]}" -o cost=ok --shards 2 -c ext4/4k \
	--fstests-src "$MINI" generic/001 generic/002 generic/006 >"$T/out" 2>"$T/err"
rc=$?
run=$(last_run)
check "room for one instance: the run goes on with it, 1 failure expected (rc=$rc: $(why))" \
	test "$rc" -eq 1
check "... said plainly" grep -qs \
	"no room for the instance: .*Quota .CPUS. exceeded.*the run goes on with 1 machine instead of 2" \
	"$T/err"
check "... every test ran ($(statuses "$run" | tr '\n' ' '))" test "$(statuses "$run")" = \
	$'generic/001 pass\ngeneric/002 pass\ngeneric/006 fail'
check "... and the run has no error" test "$(jq -r '.error' "$run/run.json")" = null
fake "quota?count=0&cpus=0" >/dev/null

# 5. A spot instance preempted in the middle of generic/012: the test goes
# back to the queue and passes on a new instance (the first instance had no
# room at first: tried again).
fake "quota?count=1&kind=exhausted" >/dev/null
before=$(last_run)
NS timeout 1800 "$FSWB" run "${GCE[@]}" -o cost=ok -o spot=yes -c ext4/4k --fstests-src "$MINI" \
	generic/012 generic/001 >"$T/out" 2>"$T/err" &
pid=$!
wait_test_start "$pid" generic/012
name=$(instances | head -1)
model=$(state | jq -r '.instances[0].provisioningModel')
check "-o spot=yes: a spot instance ($model)" test "$model" = SPOT
fake "preempt?instance=$name" >/dev/null
wait "$pid"
rc=$?
run=$r
check "preempted: the run passes (rc=$rc: $(why))" test "$rc" -eq 0
check "preempted: generic/012 ran again on a new instance and passed, then generic/001 ($(statuses "$run" | tr '\n' ' '))" \
	test "$(statuses "$run")" = $'generic/001 pass\ngeneric/012 pass'
check "preempted: said, the test back in the queue" \
	grep -qs "Compute Engine preempted the instance $name; generic/012 goes back to the queue" \
	"$T/err"
check "... and it ran on a second instance" \
	test "$(grep -o 'fswb-[0-9a-f]*-0-[0-9]*' "$run/events.jsonl" | sort -u | wc -l)" -ge 2
check "an exhausted zone was tried again" \
	grep -qs "does not have enough resources.*trying again" "$run/console.log"
check "no instance is left after the preemption" test -z "$(instances)"

# 6. fswb killed in the middle: the instance is leased; doctor shows it; the
# next run deletes it.
before=$(last_run)
# (not through NS, a function: $! would be its subshell, not fswb)
ip netns exec "$NETNS" "$FSWB" run "${GCE[@]}" -o cost=ok -c ext4/4k --fstests-src "$MINI" \
	generic/012 >/dev/null 2>&1 &
pid=$!
wait_test_start "$pid" generic/012
kill -9 "$pid"
wait "$pid" 2>/dev/null
sleep 1
left=$(instances)
check "killed: its instance is still there ($left)" test -n "$left"
out=$(NS "$FSWB" doctor "${GCE[@]}" 2>&1)
check "doctor lists it, saying it costs money" grep -q "1 in us-test1-a, which cost money.*$left" <<<"$out"
NS timeout 600 "$FSWB" run "${GCE[@]}" -o cost=ok -c ext4/4k --fstests-src "$MINI" \
	generic/001 >"$T/out" 2>"$T/err"
check "the next run says it removed what the killed fswb left ($(why))" \
	grep -qs "removed what an earlier fswb left behind.*instance.*$left" "$T/out" "$T/err"
check "... and it is gone" bash -c "! grep -qx '$left' <<<'$(instances)'"

# 7. Detached, followed live: fswb run --detach on one instance returns;
# fswb results fetch follows it while it runs (its output as it is uploaded,
# its kernel log); Ctrl-C stops following and the instance runs on; a second
# fetch follows it to the end.
NS timeout 900 "$FSWB" run "${GCE[@]}" -o cost=ok --shards 1 -c ext4/4k --detach \
	--fstests-src "$MINI" generic/001 generic/012 generic/006 >"$T/out" 2>"$T/err"
rc=$?
run=$(last_run)
id=$(basename "$run")
check "--detach on one instance returns (rc=$rc: $(why))" test "$rc" -eq 0
check "... the instance runs on" test "$(instances | wc -l)" -eq 1
ip netns exec "$NETNS" "$FSWB" results fetch "$id" >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 1200); do
	grep -qs '"test_end".*generic/001' "$run/events.jsonl" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
# the instance held still meanwhile, so that what comes next is read later
qemu=$(state | jq -r '.instances[0].qemu_pid')
kill -STOP "$qemu"
kill -INT "$pid"
wait "$pid"
rc=$?
check "Ctrl-C stops following (rc=$rc: $(why))" test "$rc" -eq 130
check "... saying the instance runs on" grep -qs "stopped following the run: its machines run on" "$T/err"
check "... and it does" test "$(instances | wc -l)" -eq 1
kill -CONT "$qemu"
NS timeout 900 "$FSWB" results fetch "$id" >"$T/out" 2>"$T/err"
rc=$?
check "fetch again: it follows the run to its end, 1 failure (rc=$rc: $(why))" test "$rc" -eq 1
check "... with check's statuses, each once ($(statuses "$run" | tr '\n' ' '))" \
	test "$(statuses "$run")" = $'generic/001 pass\ngeneric/006 fail\ngeneric/012 pass'
check "... each test once in the run's events" \
	test "$(grep -c '"test_end".*generic/001' "$run/events.jsonl")" -eq 1
check "... the kernel log came while the instance ran" grep -qs "Linux version" "$run/kernel.log"
for _ in $(seq 1 120); do [ -z "$(instances)" ] && break; sleep 0.5; done
check "... and the instance is gone" test -z "$(instances)"

# 8. Detached: fswb run --detach returns once each instance has its share;
# they run it alone, keep their output in the bucket and delete themselves;
# fswb results fetch, long after, collects the results from the bucket.
NS timeout 1200 "$FSWB" run "${GCE[@]}" -o cost=ok --shards 2 -c ext4/4k --detach \
	--fstests-src "$MINI" generic/001 generic/002 generic/006 generic/012 >"$T/out" 2>"$T/err"
rc=$?
run=$(last_run)
id=$(basename "$run")
check "--detach returns once the instances have their tests (rc=$rc: $(why))" test "$rc" -eq 0
check "... saying how to collect the results" \
	grep -qs "run goes on without fswb on 2 machines.*fswb results fetch $id" "$T/out" "$T/err"
check "... the instances run on" test "$(instances | wc -l)" -eq 2
check "... with the compute scope, to delete themselves" \
	test "$(state | jq '[.instances[] | select(.status == "RUNNING")] | length')" -eq 2
out=$(NS "$FSWB" results 2>&1)
check "fswb results lists it as detached, with the fetch command" \
	grep -q "$id.*detached.*fswb results fetch $id" <<<"$out"
out=$(NS "$FSWB" doctor "${GCE[@]}" 2>&1)
check "doctor names them as a detached run's" grep -q "detached run" <<<"$out"
for _ in $(seq 1 1200); do
	[ -z "$(instances)" ] && break
	sleep 0.5
done
check "the instances deleted themselves when done" test -z "$(instances)"
check "... each with its own token" \
	test "$(state | jq '.deleted_by_instance | length')" -eq 2
NS timeout 600 "$FSWB" results fetch "$id" >"$T/out" 2>"$T/err"
rc=$?
check "fetch collects the run: 1 failure expected (rc=$rc: $(why))" test "$rc" -eq 1
check "... with check's statuses ($(statuses "$run" | tr '\n' ' '))" test "$(statuses "$run")" = \
	$'generic/001 pass\ngeneric/002 pass\ngeneric/006 fail\ngeneric/012 pass'
check "... generic/006's .out.bad came back from the bucket" \
	test -s "$run/results/ext4-4k/generic/006.out.bad"
check "... the summary printed" grep -qs "generic/006" "$T/out"
names=$(jq -r '.shards[].follow' "$run/detached.json" | paste -sd'|')
left=$(state | jq -r '.objects[]?' 2>/dev/null | grep -Ec "^fswb-bkt/fswb/($names)/" || true)
check "... and no object of its instances ($names) is left in the bucket ($left)" \
	test -n "$names" -a "$left" -eq 0
out=$(NS "$FSWB" results fetch "$id" 2>&1)
check "a second fetch says the run ended ($out)" grep -q "ended already" <<<"$out"

# 9. What fswb keeps, deleted on request: a killed fswb whose lease is lost
# leaves an instance that only doctor --forget finds; fswb's image goes too.
ip netns exec "$NETNS" "$FSWB" run "${GCE[@]}" -o cost=ok -c ext4/4k --fstests-src "$MINI" \
	generic/012 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
	[ "$(state | jq -r '.instances[0].status' 2>/dev/null)" = RUNNING ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
rm -f "$FSWB_HOME"/data/leases/*
sleep 1
left=$(instances)
check "lease lost: the instance is still there ($left)" test -n "$left"
out=$(NS "$FSWB" doctor "${GCE[@]}" --forget 2>&1)
check "doctor --forget deletes it and fswb's image ($out)" \
	grep -q "deleted the instance $left, 1 image of fswb's in project fswb-test" <<<"$out"
check "... no instance is left" test -z "$(instances)"
check "... no image" test "$(state | jq '.images | length')" -eq 0
check "... nor the tarball made of it here" \
	test -z "$(ls "$FSWB_CACHE_DIR"/gce/fswb-*.tar.gz 2>/dev/null)"
out=$(NS "$FSWB" doctor "${GCE[@]}" --forget 2>&1)
check "... then nothing is left to delete ($out)" grep -q "nothing of fswb's to delete" <<<"$out"

done_testing
