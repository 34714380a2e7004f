# The Compute Engine double (gcefake.py) for the gce backend's end-to-end
# tests, in a network namespace of loopback only that the test makes. Source
# after tests/lib.sh; it skips the whole test when something is missing.
#
#   gce_setup WHAT      checks what the tests need (WHAT names the skipped test),
#                       builds the appliance (before the network goes away),
#                       makes the namespace, the service account's key
#                       ($T/key.json, its account EMAIL) and starts the
#                       double; sets GCE (the options of fswb run), API, NETNS
#   NS CMD...           CMD in the namespace
#   fake WHAT           POST /fake/WHAT (quota?..., preempt?instance=, outage?...)
#   state               the double's state as JSON
#   instances           the names of its instances
#   wait_test_start PID TEST   until a newer run than before has TEST started
#                       (or PID ended); its directory in $r
CACHE=${FSWB_TEST_CACHE:-/var/tmp/fswb-test-cache}
export FSWB_CACHE_DIR=$CACHE/fswb
MINI=$SRCDIR/tests/fixtures/mini-fstests
runs_dir=$FSWB_HOME/data/runs
last_run() { ls -td "$runs_dir"/*/ 2>/dev/null | head -1; }

NS() { ip netns exec "$NETNS" "$@"; }
fake() { NS curl -sf -X POST "$API/fake/$1"; }
state() { NS curl -sf "$API/fake/state"; }
instances() { state | jq -r '.instances[]?.name' 2>/dev/null; }

wait_test_start() {
	local pid=$1 test=$2 before=${before:-}
	for _ in $(seq 1 2400); do
		r=$(last_run)
		[ -n "$r" ] && [ "$r" != "$before" ] &&
			grep -q "\"event\":\"test_start\".*\"$test\"" "$r/events.jsonl" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

gce_cleanup() {
	[ -n "${FAKE_PID:-}" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	ip netns del "$NETNS" 2>/dev/null
}

gce_setup() {
	local what=$1 p n port
	need_guest "$what"
	for p in grub-mkstandalone mcopy mformat ip python3 openssl jq curl; do
		if ! command -v "$p" >/dev/null 2>&1; then
			skip "$what" "$p is not installed (make deps)"
			done_testing
			exit 0
		fi
	done
	if [ ! -r /usr/share/OVMF/OVMF_CODE_4M.fd ]; then
		skip "$what" "no OVMF firmware (make deps installs ovmf)"
		done_testing
		exit 0
	fi
	# the appliance needs Debian's mirror: made before the network goes away
	"$FSWB" appliance build --fstests-src "$MINI" >"$T/app.out" 2>&1
	check "the appliance is there (built or reused)" test $? -eq 0

	NETNS=fswb-gce-$$
	ip netns add "$NETNS" || { fail "cannot make a network namespace"; done_testing; exit 1; }
	at_exit gce_cleanup
	NS ip link set lo up

	# the service account: a key of our own, its public half given to the double
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/sa.pem" 2>/dev/null
	n=$(openssl rsa -in "$T/sa.pem" -noout -modulus 2>/dev/null | sed 's/^Modulus=//')
	EMAIL=fswb-tests@fswb-test.iam.gserviceaccount.com
	# (not through NS, a function: $! would be its subshell, not the double)
	ip netns exec "$NETNS" python3 "$SRCDIR/tests/e2e/gcefake.py" --state "$T/gce" \
		--port-file "$T/port" --project fswb-test --zone us-test1-a --client-email "$EMAIL" \
		--rsa-n "$n" --rsa-e 65537 --bucket fswb-bkt >"$T/fake.log" 2>&1 &
	FAKE_PID=$!
	for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.1; done
	port=$(cat "$T/port" 2>/dev/null)
	if [ -z "$port" ]; then
		fail "the Compute Engine double did not start: $(tail -n 3 "$T/fake.log")"
		done_testing
		exit 1
	fi
	API=http://127.0.0.1:$port
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
	export FSWB_GCE_INSTANCE_COMPUTE_URL=http://169.254.169.254/compute/v1 FSWB_GCE_UPLOAD_S=2
	export FSWB_GCE_RETRY_S=120
	GCE=(--backend gce -o "key=$T/key.json" -o zone=us-test1-a -o bucket=fswb-bkt)
}
