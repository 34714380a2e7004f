#!/usr/bin/env bash
# The gce backend end to end, against a Compute Engine double (gcefake.py)
# on loopback in a network namespace this test makes: a service-account key
# (JWT checked), the image made from the appliance and the installed kernel,
# uploaded and imported, instances that are real QEMU guests booting it with
# OVMF, the job through the metadata server and the bucket, the agent's
# output through getSerialPortOutput. Cases: plan-time refusals; doctor; a
# sharded mini-fstests run on 2 instances with the token revoked and the API
# cut for a while in the middle; quota exceeded; an instance preempted in
# the middle of a test (back to the queue); fswb killed, its instance found and deleted by the
# next start.
. "$(dirname "$0")/../lib.sh"

CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
need_guest "fswb run on the gce backend"
for p in grub-mkstandalone mcopy mformat ip python3 openssl; do
	if ! command -v "$p" >/dev/null 2>&1; then
		skip "fswb run on the gce backend" "$p is not installed (make deps)"
		done_testing
		exit 0
	fi
done
if [ ! -r /usr/share/OVMF/OVMF_CODE_4M.fd ]; then
	skip "fswb run on the gce backend" "no OVMF firmware (make deps installs ovmf)"
	done_testing
	exit 0
fi

runs_dir=$FSWB_HOME/data/runs
last_run() { ls -td "$runs_dir"/*/ 2>/dev/null | head -1; }
why() { tail -n 4 "$T/err" 2>/dev/null | tr '\n' ' '; }
statuses() { jq -r '.sections[].tests[] | "\(.test) \(.status)"' "$1/run.json" 2>/dev/null | sort; }

# The appliance needs Debian's mirror: made before the network goes away.
"$FSWB" appliance build --fstests-src "$MINI" >"$T/app.out" 2>&1
check "the appliance is there (built or reused)" test $? -eq 0

# The namespace: loopback only.
NETNS=fswb-gce-$$
ip netns add "$NETNS" || { fail "cannot make a network namespace"; done_testing; exit 1; }
NS() { ip netns exec "$NETNS" "$@"; }
NS ip link set lo up
cleanup_gce() {
	[ -n "${FAKE_PID:-}" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	ip netns del "$NETNS" 2>/dev/null
}
at_exit cleanup_gce

# The service account: a key of our own, its public half given to the double.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/sa.pem" 2>/dev/null
N=$(openssl rsa -in "$T/sa.pem" -noout -modulus 2>/dev/null | sed 's/^Modulus=//')
EMAIL=fswb-tests@fswb-test.iam.gserviceaccount.com
# (not through NS, a function: $! would be its subshell, not the double)
ip netns exec "$NETNS" python3 "$SRCDIR/tests/e2e/gcefake.py" --state "$T/gce" --port-file "$T/port" \
	--project fswb-test --zone us-test1-a --client-email "$EMAIL" --rsa-n "$N" \
	--rsa-e 65537 --bucket fswb-bkt >"$T/fake.log" 2>&1 &
FAKE_PID=$!
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.1; done
PORT=$(cat "$T/port" 2>/dev/null)
[ -n "$PORT" ] || { fail "the Compute Engine double did not start: $(tail -n 3 "$T/fake.log")"; done_testing; exit 1; }
API=http://127.0.0.1:$PORT
python3 - "$T/sa.pem" "$EMAIL" "$API/token" >"$T/key.json" <<'EOF'
import json, sys
print(json.dumps({"type": "service_account", "project_id": "fswb-test",
                  "private_key_id": "0", "private_key": open(sys.argv[1]).read(),
                  "client_email": sys.argv[2], "client_id": "1",
                  "token_uri": sys.argv[3]}))
EOF
chmod 600 "$T/key.json"
export FSWB_GCE_COMPUTE_URL=$API/compute/v1 FSWB_GCE_STORAGE_URL=$API
export FSWB_GCE_INSTANCE_STORAGE_URL=http://169.254.169.254 FSWB_GCE_POLL_MS=500
export FSWB_GCE_RETRY_S=120
GCE=(--backend gce -o "key=$T/key.json" -o zone=us-test1-a -o bucket=fswb-bkt)
fake() { NS curl -sf -X POST "$API/fake/$1"; }
state() { NS curl -sf "$API/fake/state"; }
instances() { state | jq -r '.instances[]?.name' 2>/dev/null; }

# 1. Plan time: the cost, accepted or not; what is missing.
err=$("$FSWB" run "${GCE[@]}" --fstests-src "$MINI" generic/001 2>&1)
check "without cost=ok the run is refused, with the estimate" \
	grep -q 'e2-standard-2 instance at about \$0.067 an hour.*give -o cost=ok' <<<"$err"
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

# 5. A spot instance preempted in the middle of generic/012: the test goes
# back to the queue and passes on a new instance (the first instance had no
# room at first: tried again).
fake "quota?count=1&kind=exhausted" >/dev/null
before=$(last_run)
NS timeout 1800 "$FSWB" run "${GCE[@]}" -o cost=ok -o spot=yes -c ext4/4k --fstests-src "$MINI" \
	generic/012 generic/001 >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 2400); do
	r=$(last_run)
	[ -n "$r" ] && [ "$r" != "$before" ] &&
		grep -q '"event":"test_start".*"generic/012"' "$r/events.jsonl" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
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
for _ in $(seq 1 2400); do
	r=$(last_run)
	[ -n "$r" ] && [ "$r" != "$before" ] &&
		grep -q '"event":"test_start".*"generic/012"' "$r/events.jsonl" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
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

done_testing
