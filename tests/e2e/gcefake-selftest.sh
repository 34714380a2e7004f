#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The self-test of tests/e2e/gcefake.py, the fake Google Compute Engine: it
# talks to it as a client would, with curl and openssl (and jq to read the
# JSON), without fswb. In a network namespace of its own (it re-execs itself
# under unshare -n), in a temporary directory removed at exit.
#
# What it checks: the JWT bearer grant (good, bad signature, wrong aud,
# expired), 401 without a token and after a revoke, storage (an object with
# '/' in its name round trip, Range, list, delete), images from a sparse
# GNU tar (READY) and from a disk.raw of the wrong size (operation error),
# instance insert errors (missing machineType, duplicate name, quota), a
# real UEFI guest (GRUB, built here) whose serial console reaches
# getSerialPortOutput, whose GRUB reaches its metadata server through
# slirp's guestfwd, which powers off (TERMINATED) and is deleted (404, its
# QEMU gone), the metadata server (Metadata-Flavor, wait_for_change after a
# setMetadata, a stale fingerprint: 412), a preempted spot instance, the
# network cut. Prints TAP-like "ok N - ..." lines; exits 1 on a failure.
#
# Needs: python3, qemu-system-x86_64, qemu-img, ovmf, grub-efi-amd64-bin,
# mtools, dosfstools, curl, openssl, jq, unshare (root, or user namespaces).

set -euo pipefail

if [[ ${GCEFAKE_NETNS:-} != 1 ]]; then
	# root: a network namespace; otherwise a user namespace with one too
	if [[ $EUID == 0 ]]; then NS=-n; else NS=-rn; fi
	exec env GCEFAKE_NETNS=1 unshare "$NS" -- "$BASH" "$0" "$@"
fi
ip link set lo up

HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/gcefake-selftest.XXXXXX)
SRV_PID=
cleanup() {
	if [[ -n $SRV_PID ]] && kill -0 "$SRV_PID" 2>/dev/null; then
		kill -TERM "$SRV_PID" 2>/dev/null || true
		wait "$SRV_PID" 2>/dev/null || true
	fi
	[[ -n ${GCEFAKE_KEEP:-} ]] && echo "# kept $T" || rm -rf "$T"
}
trap cleanup EXIT

N=0
FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $1"; }
nok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; [[ -z ${2:-} ]] || printf "%s\n" "$2" | tr -s " \n" " " | sed "s/^/# /"; echo; }
check() { # check WHAT CMD...
	local what=$1; shift
	if "$@"; then ok "$what"; else nok "$what" "$(tail -c 800 "$T/out" 2>/dev/null)"; fi
}
took() { echo "# $1: $((SECONDS - $2)) s"; }

PROJECT=fswb-test
ZONE=us-central1-a
EMAIL=fswb@fswb-test.iam.gserviceaccount.com
BUCKET=fswb-bucket

# ---- the service account key and the server -----------------------------------
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/key.pem" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/other.pem" 2>/dev/null
MODULUS=$(openssl rsa -in "$T/key.pem" -noout -modulus)
MODULUS=${MODULUS#Modulus=}
EXPONENT=$(openssl rsa -in "$T/key.pem" -noout -text 2>/dev/null |
	sed -n 's/^publicExponent: \([0-9]*\).*/\1/p')

python3 "$HERE/gcefake.py" --state "$T/state" --port-file "$T/port" \
	--project "$PROJECT" --zone "$ZONE" --client-email "$EMAIL" \
	--rsa-n "$MODULUS" --rsa-e "$EXPONENT" --bucket "$BUCKET" \
	>"$T/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do [[ -s $T/port ]] && break; sleep 0.1; done
PORT=$(cat "$T/port")
B=http://127.0.0.1:$PORT
C=$B/compute/v1/projects/$PROJECT
CZ=$C/zones/$ZONE
S=$B/storage/v1/b/$BUCKET
U=$B/upload/storage/v1/b/$BUCKET
echo "# gcefake on port $PORT, state $T/state"

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
jwt() { # jwt KEY AUD IAT EXP [SCOPE]
	local h c
	h=$(printf '{"alg":"RS256","typ":"JWT"}' | b64url)
	c=$(printf '{"iss":"%s","scope":"%s","aud":"%s","iat":%d,"exp":%d}' "$EMAIL" \
		"${5:-https://www.googleapis.com/auth/cloud-platform}" "$2" "$3" "$4" | b64url)
	printf '%s.%s.%s' "$h" "$c" "$(printf '%s.%s' "$h" "$c" | openssl dgst -sha256 -sign "$1" | b64url)"
}
token_req() { # token_req JWT -> HTTP code; body in $T/out
	curl -s -o "$T/out" -w '%{http_code}' -X POST "$B/token" \
		-H 'Content-Type: application/x-www-form-urlencoded' \
		--data "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=$1"
}
NOW=$(date +%s)
TOK=
get_token() {
	NOW=$(date +%s)
	[[ $(token_req "$(jwt "$T/key.pem" "$B/token" "$NOW" $((NOW + 3600)))") == 200 ]] || return 1
	TOK=$(jq -r .access_token "$T/out")
}
api() { # api METHOD URL [JSON] -> HTTP code; body in $T/out
	local args=(-s -o "$T/out" -w '%{http_code}' -X "$1" "$2")
	[[ -z $TOK ]] || args+=(-H "Authorization: Bearer $TOK")
	[[ -z ${3:-} ]] || args+=(-H 'Content-Type: application/json' --data-binary "$3")
	curl "${args[@]}"
}
wait_op() { # wait_op OPERATION-SELFLINK: until DONE (body in $T/out)
	local i
	for i in $(seq 60); do
		api POST "$1/wait" >/dev/null
		[[ $(jq -r .status "$T/out") == DONE ]] && return 0
	done
	return 1
}
is() { [[ $1 == "$2" ]] || { echo "# got '$1', want '$2'" >&2; return 1; }; }
err_is() { # err_is CODE REASON: the last body is Google's error envelope
	[[ $(jq -r '"\(.error.code) \(.error.errors[0].reason)"' "$T/out") == "$1 $2" ]]
}

# ---- auth ----------------------------------------------------------------------
check "a signed JWT bearer assertion gets an access token" \
	eval 'get_token && [[ $TOK == ya29.* ]] && [[ $(jq -r .token_type "$T/out") == Bearer ]]'
check "a bad signature is refused (400 invalid_grant)" eval \
	'[[ $(token_req "$(jwt "$T/other.pem" "$B/token" "$NOW" $((NOW + 600)))") == 400 ]] &&
	 [[ $(jq -r .error "$T/out") == invalid_grant ]] && grep -q Signature "$T/out"'
check "a wrong aud is refused (400 invalid_grant)" eval \
	'[[ $(token_req "$(jwt "$T/key.pem" "https://oauth2.googleapis.com/token" "$NOW" $((NOW + 600)))") == 400 ]] &&
	 [[ $(jq -r .error "$T/out") == invalid_grant ]] && grep -q aud "$T/out"'
check "an expired assertion is refused (400 invalid_grant)" eval \
	'[[ $(token_req "$(jwt "$T/key.pem" "$B/token" $((NOW - 250)) $((NOW - 10)))") == 400 ]] &&
	 [[ $(jq -r .error "$T/out") == invalid_grant ]]'
check "a scope without cloud-platform is refused" eval \
	'[[ $(token_req "$(jwt "$T/key.pem" "$B/token" "$NOW" $((NOW + 600)) https://www.googleapis.com/auth/compute)") == 400 ]]'
check "no token: 401 authError" eval \
	'[[ $(TOK= api GET "$C") == 401 ]] && err_is 401 authError'
check "a good token: GET the project" eval \
	'[[ $(api GET "$C") == 200 ]] && [[ $(jq -r .name "$T/out") == "$PROJECT" ]]'
check "another project and zone: 404" eval \
	'[[ $(api GET "$B/compute/v1/projects/nope") == 404 ]] && [[ $(api GET "$C/zones/europe-west1-b/instances") == 404 ]]'
check "revoked tokens get 401, a new token works" eval \
	'curl -sf -X POST "$B/fake/revoke-tokens" >/dev/null && [[ $(api GET "$C") == 401 ]] &&
	 get_token && [[ $(api GET "$C") == 200 ]]'

# ---- storage -------------------------------------------------------------------
head -c 300000 /dev/urandom >"$T/blob"
OBJ='dir/sub/blob one'
OBJQ=dir%2Fsub%2Fblob%20one
check "upload an object whose name has '/'" eval \
	'[[ $(curl -s -o "$T/out" -w "%{http_code}" -X POST -H "Authorization: Bearer $TOK" \
		-H "Content-Type: application/octet-stream" --data-binary @"$T/blob" \
		"$U/o?uploadType=media&name=$OBJQ") == 200 ]] &&
	 [[ $(jq -r .name "$T/out") == "$OBJ" ]] && [[ $(jq -r .size "$T/out") == 300000 ]] &&
	 [[ $(jq -r .md5Hash "$T/out") == "$(openssl dgst -md5 -binary "$T/blob" | openssl base64 -A)" ]]'
check "download it back byte-exact" eval \
	'curl -sf -H "Authorization: Bearer $TOK" "$S/o/$OBJQ?alt=media" -o "$T/blob.back" &&
	 cmp "$T/blob" "$T/blob.back"'
check "a Range download" eval \
	'curl -sf -H "Authorization: Bearer $TOK" -H "Range: bytes=1000-1999" "$S/o/$OBJQ?alt=media" -o "$T/part" &&
	 cmp "$T/part" <(tail -c +1001 "$T/blob" | head -c 1000)'
check "an unencoded '/' names another object (404)" eval \
	'[[ $(api GET "$S/o/dir/sub/blob%20one") == 404 ]]'
check "list by prefix" eval \
	'[[ $(api GET "$S/o?prefix=dir%2F") == 200 ]] && [[ $(jq -r ".items[0].name" "$T/out") == "$OBJ" ]]'
check "delete (204), then 404" eval \
	'[[ $(api DELETE "$S/o/$OBJQ") == 204 ]] && [[ $(api GET "$S/o/$OBJQ") == 404 ]]'
check "an unknown bucket: 404" eval '[[ $(api GET "$B/storage/v1/b/nope") == 404 ]]'

# ---- a bootable disk image: MBR, an EFI system partition, GRUB -----------------
T0=$SECONDS
cat >"$T/grub.cfg" <<'EOF'
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
echo fswb-selftest-hello
insmod efinet
insmod http
net_bootp
cat (http,169.254.169.254)/computeMetadata/v1/instance/name
echo fswb-selftest-bye
halt
EOF
grub-mkstandalone -O x86_64-efi -o "$T/BOOTX64.EFI" \
	--install-modules="normal echo halt serial terminal cat net efinet http configfile" \
	"boot/grub/grub.cfg=$T/grub.cfg"
mkfs.vfat -C "$T/esp.img" 32768 >/dev/null
mmd -i "$T/esp.img" ::/EFI ::/EFI/BOOT
mcopy -i "$T/esp.img" "$T/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI
mkdir "$T/img" "$T/bad"
truncate -s 1G "$T/img/disk.raw"
# One MBR partition, type 0xef (EFI system), LBA 2048, 65536 sectors.
printf '\x80\xfe\xff\xff\xef\xfe\xff\xff\x00\x08\x00\x00\x00\x00\x01\x00' |
	dd of="$T/img/disk.raw" bs=1 seek=446 conv=notrunc status=none
printf '\x55\xaa' | dd of="$T/img/disk.raw" bs=1 seek=510 conv=notrunc status=none
dd if="$T/esp.img" of="$T/img/disk.raw" bs=1M seek=1 conv=notrunc,sparse status=none
tar -C "$T/img" -S --format=gnu -czf "$T/disk.tar.gz" disk.raw
truncate -s 1000000 "$T/bad/disk.raw"
tar -C "$T/bad" -S --format=gnu -czf "$T/bad.tar.gz" disk.raw
took "disk image" "$T0"

upload() { # upload FILE NAME
	[[ $(curl -s -o "$T/out" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK" \
		--data-binary @"$1" "$U/o?uploadType=media&name=$2") == 200 ]]
}
check "upload the image archives" eval 'upload "$T/disk.tar.gz" img%2Fdisk.tar.gz && upload "$T/bad.tar.gz" img%2Fbad.tar.gz'

check "images.insert from a sparse GNU tar: operation DONE, image READY" eval \
	'[[ $(api POST "$C/global/images" "{\"name\":\"fswb-img\",\"rawDisk\":{\"source\":\"https://storage.googleapis.com/$BUCKET/img/disk.tar.gz\"},\"guestOsFeatures\":[{\"type\":\"UEFI_COMPATIBLE\"}]}") == 200 ]] &&
	 OP=$(jq -r .selfLink "$T/out") && wait_op "$OP" && [[ $(jq -r .error "$T/out") == null ]] &&
	 [[ $(api GET "$C/global/images/fswb-img") == 200 ]] && [[ $(jq -r .status "$T/out") == READY ]] &&
	 [[ $(jq -r .diskSizeGb "$T/out") == 1 ]]'
check "the extracted image is sparse" eval \
	'[[ -f $T/state/images/fswb-img/disk.raw ]] && [[ $(du -k "$T/state/images/fswb-img/disk.raw" | cut -f1) -lt 65536 ]]'
check "images.insert of a disk.raw not a multiple of 1 GiB: DONE with an error" eval \
	'[[ $(api POST "$C/global/images" "{\"name\":\"fswb-bad\",\"rawDisk\":{\"source\":\"gs://$BUCKET/img/bad.tar.gz\"}}") == 200 ]] &&
	 wait_op "$(jq -r .selfLink "$T/out")" && grep -q "multiple of 1 GB" "$T/out" &&
	 [[ $(api GET "$C/global/images/fswb-bad") == 200 ]] && [[ $(jq -r .status "$T/out") == FAILED ]]'
check "images.insert from a missing object: DONE with an error" eval \
	'[[ $(api POST "$C/global/images" "{\"name\":\"fswb-missing\",\"rawDisk\":{\"source\":\"gs://$BUCKET/nope.tar.gz\"}}") == 200 ]] &&
	 wait_op "$(jq -r .selfLink "$T/out")" && [[ $(jq -r ".error.errors[0].code" "$T/out") == RESOURCE_NOT_FOUND ]]'
check "a retry with the same requestId gets the same operation, not a 409" eval \
	'[[ $(api POST "$C/global/images?requestId=r-1" "{\"name\":\"fswb-img2\",\"rawDisk\":{\"source\":\"gs://$BUCKET/img/bad.tar.gz\"}}") == 200 ]] &&
	 OPN=$(jq -r .name "$T/out") &&
	 [[ $(api POST "$C/global/images?requestId=r-1" "{\"name\":\"fswb-img2\",\"rawDisk\":{\"source\":\"gs://$BUCKET/img/bad.tar.gz\"}}") == 200 ]] &&
	 [[ $(jq -r .name "$T/out") == "$OPN" ]] && wait_op "$(jq -r .selfLink "$T/out")"'
check "a duplicate image name: 409" eval \
	'[[ $(api POST "$C/global/images" "{\"name\":\"fswb-img\",\"rawDisk\":{\"source\":\"gs://$BUCKET/img/disk.tar.gz\"}}") == 409 ]] && err_is 409 alreadyExists'

# ---- instances -----------------------------------------------------------------
inst_json() { # inst_json NAME [MACHINETYPE-JSON] [SCHEDULING]
	printf '{"name":"%s",%s"disks":[{"boot":true,"autoDelete":true,"initializeParams":{"sourceImage":"global/images/fswb-img"}},{"deviceName":"scratch","autoDelete":true,"initializeParams":{"diskSizeGb":"2"}}],"networkInterfaces":[{"network":"global/networks/default"}],"metadata":{"items":[{"key":"fswb-job","value":"one"}]},"labels":{"fswb":"selftest"},"serviceAccounts":[{"email":"default","scopes":["https://www.googleapis.com/auth/devstorage.read_write"]}]%s}' \
		"$1" "${2-\"machineType\":\"zones/$ZONE/machineTypes/e2-small\",}" "${3:-}"
}
check "instances.insert without machineType: 400 naming it" eval \
	'[[ $(api POST "$CZ/instances" "$(inst_json fswb-vm "")") == 400 ]] &&
	 err_is 400 required && grep -q "resource.machineType" "$T/out"'
check "an unknown machine type: 400 invalid" eval \
	'[[ $(api POST "$CZ/instances" "$(inst_json fswb-vm "\"machineType\":\"zones/$ZONE/machineTypes/m9-huge\",")") == 400 ]] && err_is 400 invalid'
check "quota control: the next insert gets 403 quotaExceeded" eval \
	'curl -sf -X POST "$B/fake/quota?count=1&kind=quotaExceeded" >/dev/null &&
	 [[ $(api POST "$CZ/instances" "$(inst_json fswb-vm)") == 403 ]] && err_is 403 quotaExceeded &&
	 grep -q "Quota .CPUS. exceeded" "$T/out"'
check "exhausted zone: the operation ends with ZONE_RESOURCE_POOL_EXHAUSTED" eval \
	'curl -sf -X POST "$B/fake/quota?count=1&kind=exhausted" >/dev/null &&
	 [[ $(api POST "$CZ/instances" "$(inst_json fswb-vm)") == 200 ]] &&
	 wait_op "$(jq -r .selfLink "$T/out")" &&
	 [[ $(jq -r ".error.errors[0].code" "$T/out") == ZONE_RESOURCE_POOL_EXHAUSTED ]] &&
	 [[ $(api GET "$CZ/instances/fswb-vm") == 404 ]]'

T0=$SECONDS
check "instances.insert boots a QEMU guest: RUNNING" eval \
	'[[ $(api POST "$CZ/instances" "$(inst_json fswb-vm)") == 200 ]] &&
	 wait_op "$(jq -r .selfLink "$T/out")" && [[ $(jq -r .error "$T/out") == null ]] &&
	 [[ $(api GET "$CZ/instances/fswb-vm") == 200 ]] && [[ $(jq -r .status "$T/out") =~ ^(RUNNING|TERMINATED)$ ]]'
check "a second insert of the same name: 409" eval \
	'[[ $(api POST "$CZ/instances" "$(inst_json fswb-vm)") == 409 ]] && err_is 409 alreadyExists'
check "list with a name filter" eval \
	'[[ $(api GET "$CZ/instances?filter=name%20eq%20%22fswb-.*%22") == 200 ]] && [[ $(jq -r ".items | length" "$T/out") == 1 ]] &&
	 [[ $(api GET "$CZ/instances?filter=name%20eq%20%22other-.*%22") == 200 ]] && [[ $(jq -r ".items | length" "$T/out") == 0 ]]'
check "the instance's disks" eval \
	'[[ $(api GET "$CZ/instances/fswb-vm") == 200 ]] &&
	 [[ $(jq -r "[.disks[] | \"\(.index):\(.deviceName):\(.boot)\"] | join(\",\")" "$T/out") == "0:persistent-disk-0:true,1:scratch:false" ]]'
curl -sf "$B/fake/state" >"$T/state.json"
QPID=$(jq -r '.instances[] | select(.name == "fswb-vm") | .qemu_pid' "$T/state.json")
MD=$(jq -r '.instances[] | select(.name == "fswb-vm") | .metadata_port' "$T/state.json")
echo "# qemu pid $QPID, metadata port $MD"

serial_has() { # serial_has WORD: poll getSerialPortOutput port 1 (90 s)
	local i
	for i in $(seq 180); do
		api GET "$CZ/instances/fswb-vm/serialPort?port=1" >/dev/null
		jq -r .contents "$T/out" | grep -q "$1" && return 0
		sleep 0.5
	done
	return 1
}
status_is() { # status_is NAME STATUS: poll (60 s)
	local i
	for i in $(seq 120); do
		api GET "$CZ/instances/$1" >/dev/null
		[[ $(jq -r .status "$T/out") == "$2" ]] && return 0
		sleep 0.5
	done
	return 1
}
check "the guest's console reaches getSerialPortOutput port 1" serial_has fswb-selftest-hello
took "boot to GRUB" "$T0"
check "the guest reached its metadata server through guestfwd (403: no Metadata-Flavor)" eval \
	'serial_has "Missing Metadata-Flavor" && serial_has fswb-selftest-bye &&
	 grep -q "\[md fswb-vm\] GET /computeMetadata/v1/instance/name 403" "$T/state/requests.log"'
check "after halt: TERMINATED, QEMU gone" eval 'status_is fswb-vm TERMINATED && ! kill -0 "$QPID" 2>/dev/null'
check "serialPort start/next" eval \
	'[[ $(api GET "$CZ/instances/fswb-vm/serialPort?port=1&start=5") == 200 ]] && [[ $(jq -r .start "$T/out") == 5 ]] &&
	 NEXT=$(jq -r .next "$T/out") && [[ $(api GET "$CZ/instances/fswb-vm/serialPort?port=1&start=$NEXT") == 200 ]] &&
	 [[ $(jq -r .contents "$T/out") == "" ]] && [[ $(api GET "$CZ/instances/fswb-vm/serialPort?port=5") == 400 ]]'

# ---- the metadata server -------------------------------------------------------
MDB=http://127.0.0.1:$MD/computeMetadata/v1
check "metadata without Metadata-Flavor: 403" eval \
	'[[ $(curl -s -o /dev/null -w "%{http_code}" "$MDB/instance/name") == 403 ]]'
check "metadata with it: name, attribute, list, 404" eval \
	'[[ $(curl -sf -H "Metadata-Flavor: Google" "$MDB/instance/name") == fswb-vm ]] &&
	 [[ $(curl -sf -H "Metadata-Flavor: Google" "$MDB/instance/attributes/fswb-job") == one ]] &&
	 [[ $(curl -sf -H "Metadata-Flavor: Google" "$MDB/instance/attributes/") == fswb-job ]] &&
	 [[ $(curl -s -o /dev/null -w "%{http_code}" -H "Metadata-Flavor: Google" "$MDB/instance/attributes/nope") == 404 ]]'
check "the metadata token works on storage" eval \
	'MT=$(curl -sf -H "Metadata-Flavor: Google" "$MDB/instance/service-accounts/default/token" | jq -r .access_token) &&
	 [[ $(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $MT" "http://127.0.0.1:$MD/storage/v1/b/$BUCKET/o") == 200 ]]'
check "... not on compute without the compute scope: 403, and the scopes say so" eval \
	'[[ $(curl -s -o "$T/out" -w "%{http_code}" -H "Authorization: Bearer $MT" "http://127.0.0.1:$MD/compute/v1/projects/$PROJECT/zones/$ZONE/instances/fswb-vm") == 403 ]] &&
	 err_is 403 insufficientPermissions &&
	 [[ $(curl -sf -H "Metadata-Flavor: Google" "$MDB/instance/service-accounts/default/scopes") == https://www.googleapis.com/auth/devstorage.read_write ]]'
ETAG=$(curl -s -D - -o /dev/null -H "Metadata-Flavor: Google" "$MDB/instance/attributes/fswb-job" |
	tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
curl -s -H "Metadata-Flavor: Google" -o "$T/waited" \
	"$MDB/instance/attributes/fswb-job?wait_for_change=true&last_etag=$ETAG&timeout_sec=30" &
WAITER=$!
sleep 1
api GET "$CZ/instances/fswb-vm" >/dev/null
FP=$(jq -r .metadata.fingerprint "$T/out")
check "setMetadata with a stale fingerprint: 412" eval \
	'[[ $(api POST "$CZ/instances/fswb-vm/setMetadata" "{\"fingerprint\":\"c3RhbGU=\",\"items\":[{\"key\":\"fswb-job\",\"value\":\"two\"}]}") == 412 ]] &&
	 err_is 412 conditionNotMet'
T0=$SECONDS
check "setMetadata with the fingerprint; wait_for_change returns the new value" eval \
	'[[ $(api POST "$CZ/instances/fswb-vm/setMetadata" "{\"fingerprint\":\"$FP\",\"items\":[{\"key\":\"fswb-job\",\"value\":\"two\"}]}") == 200 ]] &&
	 wait_op "$(jq -r .selfLink "$T/out")" && wait "$WAITER" && [[ $(cat "$T/waited") == two ]] &&
	 [[ $((SECONDS - T0)) -lt 10 ]] &&
	 [[ $(api GET "$CZ/instances/fswb-vm") == 200 ]] && [[ $(jq -r .metadata.fingerprint "$T/out") != "$FP" ]]'
check "DELETE: operation DONE, then 404, files gone" eval \
	'[[ $(api DELETE "$CZ/instances/fswb-vm") == 200 ]] && wait_op "$(jq -r .selfLink "$T/out")" &&
	 [[ $(api GET "$CZ/instances/fswb-vm") == 404 ]] && grep -q "instances/fswb-vm. was not found" "$T/out" &&
	 [[ ! -e $T/state/instances/fswb-vm ]] && [[ -z $(ls "$T/state/disks") ]] &&
	 [[ $(api GET "$CZ/instances/fswb-vm/serialPort?port=1") == 404 ]]'

# ---- preemption, the network cut ------------------------------------------------
check "a spot instance, preempted: TERMINATED, deleted, the operation listed" eval \
	'[[ $(api POST "$CZ/instances" "$(inst_json fswb-spot "\"machineType\":\"zones/$ZONE/machineTypes/e2-small\"," ",\"scheduling\":{\"provisioningModel\":\"SPOT\",\"instanceTerminationAction\":\"DELETE\"}")") == 200 ]] &&
	 wait_op "$(jq -r .selfLink "$T/out")" && status_is fswb-spot RUNNING &&
	 SPID=$(curl -sf "$B/fake/state" | jq -r ".instances[0].qemu_pid") &&
	 curl -sf -X POST "$B/fake/preempt?instance=fswb-spot" >/dev/null &&
	 ! kill -0 "$SPID" 2>/dev/null && sleep 1 && [[ $(api GET "$CZ/instances/fswb-spot") == 404 ]] &&
	 [[ $(api GET "$CZ/operations?filter=operationType%3D%22compute.instances.preempted%22") == 200 ]] &&
	 [[ $(jq -r "[.items[] | select(.operationType == \"compute.instances.preempted\") | .targetLink] | length" "$T/out") == 1 ]] &&
	 [[ $(jq -r ".items | length" "$T/out") == 1 ]]'
check "the network cut: no response, then service again" eval \
	'curl -sf -X POST "$B/fake/outage?seconds=2" >/dev/null &&
	 ! curl -s -o /dev/null -H "Authorization: Bearer $TOK" "$C" && sleep 2.2 &&
	 [[ $(api GET "$C") == 200 ]]'
check "the request log holds no token or assertion" eval \
	'! grep -Eq "ya29|assertion=|eyJ" "$T/state/requests.log"'

# ---- the end: the server exits, no QEMU is left ----------------------------------
LPID=
check "an instance running when the server stops" eval \
	'[[ $(api POST "$CZ/instances" "$(inst_json fswb-last)") == 200 ]] &&
	 wait_op "$(jq -r .selfLink "$T/out")" &&
	 LPID=$(curl -sf "$B/fake/state" | jq -r ".instances[0].qemu_pid") && kill -0 "$LPID"'
kill -TERM "$SRV_PID"
RC=0
wait "$SRV_PID" || RC=$?
SRV_PID=
check "SIGTERM: the server exits 0" is "$RC" 0
check "no QEMU left" eval '! pgrep -f "$T/state" >/dev/null && { [[ -z $LPID ]] || ! kill -0 "$LPID" 2>/dev/null; }'
check "the stopped server left its files" eval '[[ -f $T/state/instances/fswb-last/serial1.log ]]'

echo "# $((N - FAILED))/$N passed"
[[ $FAILED == 0 ]]
