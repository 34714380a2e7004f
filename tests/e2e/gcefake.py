#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A small Google Compute Engine for fswb's end-to-end tests: the OAuth token
endpoint, the parts of the Compute Engine v1 and Cloud Storage JSON APIs the
gce backend uses, and a metadata server per instance. Instances are real
local QEMU guests (q35, TCG, OVMF), so what boots on GCE boots here.

Command line:
  gcefake.py --state DIR --port-file FILE --project P --zone Z
             --client-email EMAIL --rsa-n HEX --rsa-e INT
             [--token-lifetime SEC] [--bucket NAME]... [--qemu PROG]
             [--ovmf-code PATH --ovmf-vars PATH]
             [--instance-storage-host ADDR]

It listens on 127.0.0.1 (a free port, written to --port-file once it
serves). Base URLs: token http://127.0.0.1:PORT/token, compute
http://127.0.0.1:PORT/compute/v1/, storage .../storage/v1/ and
.../upload/storage/v1/ (uploadType=media and resumable; downloads with
alt=media or through mediaLink, /download/storage/v1/...).

Control endpoints for tests (no auth; POST with a query or a JSON body):
  /fake/revoke-tokens               every token issued so far is dead (401)
  /fake/quota?count=K&kind=KIND     the next K instance inserts fail: KIND
                                    quotaExceeded (403 "Quota 'CPUS'
                                    exceeded") or exhausted (the operation
                                    ends with ZONE_RESOURCE_POOL_EXHAUSTED)
  /fake/preempt?instance=NAME       QEMU killed, TERMINATED, an operation
                                    compute.instances.preempted; deleted
                                    when instanceTerminationAction is DELETE
  /fake/outage?seconds=S            S seconds of /token, /compute, /storage,
                                    /upload, /download requests answered by
                                    a closed connection
  /fake/bucket?name=B               a bucket
  GET /fake/state                   instances [{name, status, qemu_pid,
                                    metadata_port, ...}], images, disks,
                                    buckets, objects ["BUCKET/NAME"...],
                                    object_sizes, live_tokens

What it checks, as Google does: the JWT bearer grant (RS256 over the one
service account key given as --rsa-n/--rsa-e, iss, aud = this server's
token URL, scope, iat/exp); a live access token on every API call (401
authError otherwise); resource names, machine types, the boot disk's
image, metadata keys and sizes, the metadata fingerprint (412); images
from a gzip'd tar holding exactly one file disk.raw, a multiple of 1 GiB.
Errors use Google's envelope {"error":{"code","message","errors":[...],
"status"}}.

An instance: DIR/instances/NAME/ holds vars.fd (a copy of --ovmf-vars),
serial1.log..serial4.log (ttyS0..ttyS3, GCE serial ports 1..4), qemu.log
and qemu.pid; its disks are DIR/disks/DISK.qcow2 (the boot disk: a qcow2
overlay over a hard link of the image, DIR/disks/DISK.base, so the image
is never written and may be deleted while in use) or DIR/disks/DISK.raw
(sparse). All disks sit on one virtio-scsi controller as scsi-hd with
serial=deviceName, vendor Google, product PersistentDisk (so
/dev/disk/by-id/scsi-0Google_PersistentDisk_DEVICENAME, as on GCE;
QEMU limits the serial, so deviceName is at most 36 characters here).
Its network is slirp with net 169.254.169.0/24; the guest reaches its
metadata server at 169.254.169.254:80 (a guestfwd whose command is this
program with --relay MDPORT, connecting to the instance's metadata port on
127.0.0.1). That port also serves /storage/v1 and /upload/storage/v1, so
the guest reaches storage at http://169.254.169.254/storage/v1 (or, with
--instance-storage-host ADDR inside 169.254.169.0/24, at http://ADDR/ as
well), with the token of its metadata server.

SIGTERM/SIGINT: every QEMU it started is killed and reaped; nothing is
removed; exit 0.

Python 3 standard library only. The request log (DIR/requests.log) holds
method, path and status: never a token, an assertion or a key.
"""

import argparse
import base64
import datetime
import hashlib
import http.server
import ipaddress
import json
import os
import re
import secrets
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.parse

GIB = 1 << 30
SERIAL_BUF = 1 << 20
METADATA_MAX = 512 * 1024
SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")
SCOPE_ALL = "https://www.googleapis.com/auth/cloud-platform"
SCOPE_COMPUTE = "https://www.googleapis.com/auth/compute"
SCOPE_STORAGE = "https://www.googleapis.com/auth/devstorage.read_write"
NAME_RE = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z")
MDKEY_RE = re.compile(r"[a-zA-Z0-9_-]{1,128}\Z")
MACHINE_TYPES = {"e2-standard-2": (2, 8192), "e2-standard-4": (4, 16384),
                 "n2-standard-2": (2, 8192), "n2-standard-4": (4, 16384),
                 "n1-standard-2": (2, 7680), "e2-small": (2, 2048)}
SMALL_TYPES = {"e2-small"}
SLIRP_NET = ipaddress.ip_network("169.254.169.0/24")
MD_ADDR = "169.254.169.254"
AUTH_MSG = ("Request had invalid authentication credentials. Expected OAuth 2 "
            "access token, login cookie or other valid authentication "
            "credential. See https://developers.google.com/identity/sign-in/"
            "web/devconsole-project.")
STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED",
                403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION",
                416: "OUT_OF_RANGE", 429: "RESOURCE_EXHAUSTED",
                500: "INTERNAL", 503: "UNAVAILABLE"}

A = None            # the parsed command line
BASE = None         # http://127.0.0.1:PORT
L = threading.RLock()
CHANGED = threading.Condition(L)
LOG_LOCK = threading.Lock()
STOPPING = threading.Event()

TOKENS = {}         # token -> {"exp": t, "instance": name or None}
OPS = {}            # name -> operation dict (zonal ones have "zone")
IMAGES = {}         # name -> image dict
DISKS = {}          # name -> {"res": dict, "path": str, "base": str or None}
INSTANCES = {}      # name -> Instance
REQUEST_IDS = {}    # requestId -> operation name
BUCKETS = {}        # name -> bucket dict
UPLOADS = {}        # upload id -> {"bucket", "name", "ctype", "path", "got"}
QUOTA = {"count": 0, "kind": "quotaExceeded", "cpus": 0}   # cpus: the region's limit, 0: 8
OUTAGE = {"until": 0.0}
SELF_DELETED = []      # instances deleted with an instance's own token


class ApiError(Exception):
    def __init__(self, code, reason, message, extra=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.extra = extra or {}


def log(msg):
    with LOG_LOCK:
        with open(os.path.join(A.state, "requests.log"), "a") as f:
            f.write("%s %s\n" % (time.strftime("%H:%M:%S"), msg))


def now_rfc3339(t=None):
    t = time.time() if t is None else t
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (d.microsecond // 1000)


def new_id():
    return str(secrets.randbelow(9 * 10 ** 18) + 10 ** 18)


def project_number():
    return str(int(hashlib.sha256(A.project.encode()).hexdigest(), 16) % 10 ** 12)


def region():
    return A.zone.rsplit("-", 1)[0]


def compute_url(rel):
    return "%s/compute/v1/%s" % (BASE, rel)


def zone_rel():
    return "projects/%s/zones/%s" % (A.project, A.zone)


def b64url_decode(s):
    if not re.fullmatch(r"[A-Za-z0-9_-]*", s):
        raise ValueError("not base64url without padding")
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


# ---- auth -------------------------------------------------------------------

def rs256_ok(signing_input, sig):
    n, e = A.rsa_n, A.rsa_e
    k = (n.bit_length() + 7) // 8
    if len(sig) != k:
        return False
    s = int.from_bytes(sig, "big")
    if s >= n:
        return False
    em = pow(s, e, n).to_bytes(k, "big")
    t = SHA256_PREFIX + hashlib.sha256(signing_input).digest()
    if k < len(t) + 11:
        return False
    return em == b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t


def check_assertion(jwt):
    """None when the JWT bearer assertion is good, else why not."""
    parts = jwt.split(".")
    if len(parts) != 3:
        return "Invalid JWT: not three dot-separated parts"
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        sig = b64url_decode(parts[2])
    except (ValueError, UnicodeDecodeError):
        return "Invalid JWT: a part is not base64url (without padding) of JSON"
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return "Invalid JWT: header or claims not a JSON object"
    if header.get("alg") != "RS256" or header.get("typ") != "JWT" or \
            set(header) - {"alg", "typ", "kid"}:
        return "Invalid JWT header: want {\"alg\":\"RS256\",\"typ\":\"JWT\"}"
    if not rs256_ok((parts[0] + "." + parts[1]).encode(), sig):
        return "Invalid JWT Signature."
    if claims.get("iss") != A.client_email:
        return "Invalid JWT: iss is not a known service account"
    if claims.get("aud") != BASE + "/token":
        return "Invalid JWT: Token must be a short-lived token (aud must be %s/token)" % BASE
    scope = claims.get("scope")
    if not isinstance(scope, str) or not scope.strip():
        return "Invalid JWT: no scope"
    scopes = scope.split()
    if SCOPE_ALL not in scopes and not (SCOPE_COMPUTE in scopes and SCOPE_STORAGE in scopes):
        return "Invalid JWT: scope lacks %s" % SCOPE_ALL
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or not isinstance(exp, int) or \
            isinstance(iat, bool) or isinstance(exp, bool):
        return "Invalid JWT: iat and exp must be integers"
    t = time.time()
    if abs(iat - t) > 300:
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
    if exp <= t:
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim. (expired)"
    if exp - iat > 3600:
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim. (exp - iat > 3600)"
    return None


def issue_token(instance=None):
    tok = "ya29." + secrets.token_urlsafe(48)
    with L:
        TOKENS[tok] = {"exp": time.time() + A.token_lifetime, "instance": instance}
    return tok


def instance_scopes(inst):
    """The scopes the instance's service account was given at insert."""
    out = []
    for sa in inst.res.get("serviceAccounts") or []:
        out += sa.get("scopes") or []
    return out


def token_ok(tok):
    with L:
        t = TOKENS.get(tok)
        if t is None:
            return False
        if t["exp"] <= time.time():
            del TOKENS[tok]
            return False
        if t["instance"] is not None and t["instance"] not in INSTANCES:
            return False
        return True


# ---- operations -------------------------------------------------------------

def new_op(op_type, target_rel, zonal, target_id=None):
    name = "operation-%d-%s" % (int(time.time() * 1000), secrets.token_hex(6))
    rel = ("%s/operations/%s" % (zone_rel(), name) if zonal else
           "projects/%s/global/operations/%s" % (A.project, name))
    op = {"kind": "compute#operation", "id": new_id(), "name": name,
          "operationType": op_type, "targetLink": compute_url(target_rel),
          "status": "RUNNING", "progress": 0, "insertTime": now_rfc3339(),
          "startTime": now_rfc3339(), "selfLink": compute_url(rel),
          "user": A.client_email}
    if target_id:
        op["targetId"] = target_id
    if zonal:
        op["zone"] = compute_url(zone_rel())
    with L:
        OPS[name] = op
    return op


def finish_op(op, error_code=None, message=None, http_status=None):
    with L:
        op["status"] = "DONE"
        op["progress"] = 100
        op["endTime"] = now_rfc3339()
        if error_code:
            op["error"] = {"errors": [{"code": error_code, "message": message}]}
            if http_status:
                op["httpErrorStatusCode"] = http_status
                op["httpErrorMessage"] = STATUS_NAMES.get(http_status, "ERROR")
        CHANGED.notify_all()


def snapshot(d):
    with L:
        return json.loads(json.dumps(d))


# ---- storage ----------------------------------------------------------------

def bucket_dir(b):
    return os.path.join(A.state, "storage", b)


def obj_base(b, name):
    return os.path.join(bucket_dir(b), hashlib.sha256(name.encode()).hexdigest())


def make_bucket(name):
    if not re.fullmatch(r"[a-z0-9][-a-z0-9_.]{1,61}[a-z0-9]", name):
        raise ApiError(400, "invalid", "Invalid bucket name: '%s'" % name)
    with L:
        if name not in BUCKETS:
            os.makedirs(bucket_dir(name), exist_ok=True)
            BUCKETS[name] = {"kind": "storage#bucket", "id": name, "name": name,
                             "projectNumber": project_number(),
                             "location": region().upper(), "storageClass": "STANDARD",
                             "timeCreated": now_rfc3339(), "updated": now_rfc3339(),
                             "metageneration": "1", "etag": "CAE="}
        return BUCKETS[name]


def need_bucket(b):
    with L:
        if b not in BUCKETS:
            raise ApiError(404, "notFound", "The specified bucket does not exist.")


def obj_meta(b, name):
    try:
        with open(obj_base(b, name) + ".json") as f:
            m = json.load(f)
    except FileNotFoundError:
        return None
    return m if m.get("name") == name else None


def obj_links(m, host):
    q = urllib.parse.quote(m["name"], safe="")
    m = dict(m)
    m["selfLink"] = "http://%s/storage/v1/b/%s/o/%s" % (host, m["bucket"], q)
    m["mediaLink"] = "http://%s/download/storage/v1/b/%s/o/%s?generation=%s&alt=media" % (
        host, m["bucket"], q, m["generation"])
    m["id"] = "%s/%s/%s" % (m["bucket"], m["name"], m["generation"])
    return m


def store_object(b, name, src_path, ctype):
    """Moves src_path in as object NAME of bucket B; its metadata."""
    if not name or len(name.encode()) > 1024 or "\n" in name or "\r" in name:
        raise ApiError(400, "invalid", "The object name is invalid.")
    md5 = hashlib.md5()
    size = 0
    with open(src_path, "rb") as f:
        while True:
            c = f.read(1 << 20)
            if not c:
                break
            md5.update(c)
            size += len(c)
    gen = str(time.time_ns() // 1000)
    m = {"kind": "storage#object", "name": name, "bucket": b, "generation": gen,
         "metageneration": "1", "contentType": ctype or "application/octet-stream",
         "storageClass": "STANDARD", "size": str(size),
         "md5Hash": base64.b64encode(md5.digest()).decode(),
         "etag": base64.b64encode(gen.encode()).decode(),
         "timeCreated": now_rfc3339(), "updated": now_rfc3339()}
    base = obj_base(b, name)
    with L:
        os.rename(src_path, base + ".data")
        with open(base + ".json.tmp", "w") as f:
            json.dump(m, f)
        os.rename(base + ".json.tmp", base + ".json")
    return m


def list_objects(b):
    out = []
    for fn in os.listdir(bucket_dir(b)):
        if fn.endswith(".json") and len(fn) == 69:
            try:
                with open(os.path.join(bucket_dir(b), fn)) as f:
                    out.append(json.load(f))
            except (OSError, ValueError):
                pass
    out.sort(key=lambda m: m["name"])
    return out


def parse_gcs_url(src):
    for pre in ("https://storage.googleapis.com/", "https://storage.cloud.google.com/",
                "gs://"):
        if src.startswith(pre):
            rest = src[len(pre):]
            if "/" in rest:
                b, o = rest.split("/", 1)
                if b and o:
                    return b, urllib.parse.unquote(o) if pre != "gs://" else o
    return None


# ---- images -----------------------------------------------------------------

def build_image(op, img, src):
    name = img["name"]
    err = None
    loc = parse_gcs_url(src)
    d = os.path.join(A.state, "images", name)
    try:
        if loc is None or obj_meta(loc[0], loc[1]) is None:
            err = ("RESOURCE_NOT_FOUND",
                   "The resource '%s' of type 'Google Cloud Storage object' was not found." % src,
                   404)
        else:
            path = obj_base(*loc) + ".data"
            err = extract_disk(path, d)
    except Exception as e:  # a broken archive: gzip, tar, I/O
        err = ("INVALID_IMAGE_FILE", "The image archive could not be read: %s" % e, 400)
    with L:
        if err:
            img["status"] = "FAILED"
            shutil.rmtree(d, ignore_errors=True)
        else:
            img["status"] = "READY"
            size = os.path.getsize(os.path.join(d, "disk.raw"))
            img["diskSizeGb"] = str(size // GIB)
            img["archiveSizeBytes"] = str(os.path.getsize(obj_base(*loc) + ".data"))
    if err:
        finish_op(op, err[0], err[1], err[2])
    else:
        finish_op(op)


def extract_disk(archive, d):
    with tarfile.open(archive, mode="r:gz") as t:
        members = t.getmembers()
        if len(members) != 1 or members[0].name != "disk.raw" or not members[0].isreg():
            return ("INVALID_IMAGE_FILE",
                    "The image archive must contain exactly one file, named disk.raw; it has: %s"
                    % ", ".join(repr(m.name) for m in members[:5]), 400)
        m = members[0]
        if m.size == 0 or m.size % GIB:
            return ("INVALID_IMAGE_FILE",
                    "The image must be a multiple of 1 GB. disk.raw is %d bytes." % m.size, 400)
        os.makedirs(d, exist_ok=True)
        src = t.extractfile(m)
        out_path = os.path.join(d, "disk.raw.tmp")
        with open(out_path, "wb") as out:
            regions = m.sparse if m.sparse else [(0, m.size)]
            for off, size in regions:
                src.seek(off)
                pos = off
                left = size
                while left > 0:
                    c = src.read(min(left, 1 << 20))
                    if not c:
                        raise OSError("archive truncated")
                    if c.count(0) != len(c):
                        out.seek(pos)
                        out.write(c)
                    pos += len(c)
                    left -= len(c)
            out.truncate(m.size)
        os.chmod(out_path, 0o444)
        os.rename(out_path, os.path.join(d, "disk.raw"))
    return None


# ---- instances --------------------------------------------------------------

def qarg(s):
    return s.replace(",", ",,")


class Instance:
    def __init__(self, res, sched, disks):
        self.res = res
        self.name = res["name"]
        self.dir = os.path.join(A.state, "instances", self.name)
        self.disks = disks      # [{"name","deviceName","boot","autoDelete","path","fmt"}]
        self.sched = sched
        self.proc = None
        self.md = None
        self.md_port = None
        self.deleting = False
        self.preempted = False

    # --- lifecycle ---
    def start(self, op):
        try:
            os.makedirs(self.dir, exist_ok=True)
            for i in range(1, 5):
                open(os.path.join(self.dir, "serial%d.log" % i), "ab").close()
            shutil.copyfile(A.ovmf_vars, os.path.join(self.dir, "vars.fd"))
            for d in self.disks:
                for p in (d["path"], d.get("base")):
                    if p and os.path.lexists(p):    # left by an earlier server
                        os.unlink(p)
                if d["boot"]:
                    os.link(d["image"], d["base"])
                    subprocess.run([A.qemu_img, "create", "-q", "-f", "qcow2", "-F", "raw",
                                    "-b", d["base"], d["path"], str(d["sizeGb"] * GIB)],
                                   check=True, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                else:
                    with open(d["path"], "wb") as f:
                        f.truncate(d["sizeGb"] * GIB)
            self.md = MetadataServer(self)
            self.md_port = self.md.server_address[1]
            threading.Thread(target=self.md.serve_forever, daemon=True).start()
            with L:
                if self.deleting:
                    raise RuntimeError("deleted while starting")
                self.res["status"] = "STAGING"
                CHANGED.notify_all()
            self.launch()
        except Exception as e:
            log("instance %s failed to start: %s" % (self.name, e))
            if self.deleting and self.md:
                self.md.shutdown()
                self.md.server_close()
            with L:
                self.res["status"] = "TERMINATED"
                self.res["statusMessage"] = "failed to start: %s" % e
            finish_op(op, "INTERNAL_ERROR", "The instance could not be started: %s" % e, 500)
            return
        with L:
            self.res["status"] = "RUNNING"
            self.res["lastStartTimestamp"] = now_rfc3339()
        finish_op(op)
        threading.Thread(target=self.watch, daemon=True).start()

    def qemu_argv(self):
        mtype = self.res["machineType"].rsplit("/", 1)[1]
        relay = "%s %s --relay %d" % (shlex.quote(sys.executable),
                                      shlex.quote(os.path.abspath(__file__)), self.md_port)
        fwd = ["guestfwd=tcp:%s:80-cmd:%s" % (MD_ADDR, qarg(relay))]
        if A.instance_storage_host and A.instance_storage_host != MD_ADDR:
            fwd.append("guestfwd=tcp:%s:80-cmd:%s" % (A.instance_storage_host, qarg(relay)))
        argv = [A.qemu, "-machine", "q35", "-accel", "tcg",
                "-m", "1024" if mtype in SMALL_TYPES else "2048", "-smp", "2",
                "-nographic", "-nodefaults", "-no-user-config",
                "-drive", "if=pflash,format=raw,readonly=on,file=" + qarg(A.ovmf_code),
                "-drive", "if=pflash,format=raw,file=" + qarg(os.path.join(self.dir, "vars.fd")),
                "-device", "virtio-scsi-pci,id=scsi0"]
        for i, d in enumerate(self.disks):
            argv += ["-drive", "if=none,id=d%d,format=%s,file=%s,discard=unmap" % (
                         i, d["fmt"], qarg(d["path"])),
                     "-device", "scsi-hd,bus=scsi0.0,drive=d%d,serial=%s,vendor=Google,"
                     "product=PersistentDisk%s" % (i, d["deviceName"],
                                                   ",bootindex=0" if d["boot"] else "")]
        for i in range(1, 5):
            argv += ["-serial", "file:" + os.path.join(self.dir, "serial%d.log" % i)]
        argv += ["-netdev", "user,id=n0,net=%s,host=169.254.169.1,dhcpstart=169.254.169.15,%s"
                 % (SLIRP_NET, ",".join(fwd)),
                 "-device", "virtio-net-pci,netdev=n0,romfile=,bootindex=1"]
        return argv

    def launch(self):
        argv = self.qemu_argv()
        with open(os.path.join(self.dir, "qemu.log"), "ab") as qlog:
            qlog.write(("+ %s\n" % " ".join(shlex.quote(a) for a in argv)).encode())
            qlog.flush()
            with L:
                if STOPPING.is_set() or self.deleting:
                    raise RuntimeError("server stopping or instance deleted")
                self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=qlog,
                                             stderr=qlog, start_new_session=True)
        with open(os.path.join(self.dir, "qemu.pid"), "w") as f:
            f.write("%d\n" % self.proc.pid)

    def watch(self):
        rc = self.proc.wait()
        log("instance %s: qemu exited %d" % (self.name, rc))
        with L:
            if not self.deleting and self.res["status"] != "TERMINATED":
                self.res["status"] = "TERMINATED"
                self.res["lastStopTimestamp"] = now_rfc3339()
            CHANGED.notify_all()

    def kill(self):
        p = self.proc
        if p is None:
            return
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()

    def remove(self):
        """Kills QEMU, removes the instance, its files, its auto-delete disks."""
        self.kill()
        if self.md:
            self.md.shutdown()
            self.md.server_close()
        with L:
            INSTANCES.pop(self.name, None)
            for d in self.disks:
                if d["autoDelete"]:
                    DISKS.pop(d["name"], None)
                    for p in (d["path"], d.get("base")):
                        if p:
                            try:
                                os.unlink(p)
                            except FileNotFoundError:
                                pass
                elif d["name"] in DISKS:
                    DISKS[d["name"]]["res"]["users"] = []
            CHANGED.notify_all()
        shutil.rmtree(self.dir, ignore_errors=True)

    # --- views ---
    def metadata_items(self):
        return {i["key"]: i["value"] for i in self.res["metadata"].get("items", [])}


def resolve_image(ref):
    if not isinstance(ref, str):
        return None
    m = re.fullmatch(r"(?:https?://[^/]+/compute/v1/)?(?:projects/%s/)?global/images/([^/]+)"
                     % re.escape(A.project), ref)
    return m.group(1) if m else None


def check_metadata(md, field):
    if md is None:
        return {"kind": "compute#metadata", "items": []}
    if not isinstance(md, dict):
        raise ApiError(400, "invalid", "Invalid value for field '%s'." % field)
    items = md.get("items", [])
    if not isinstance(items, list):
        raise ApiError(400, "invalid", "Invalid value for field '%s.items'." % field)
    seen = set()
    total = 0
    out = []
    for i, it in enumerate(items):
        k = it.get("key") if isinstance(it, dict) else None
        v = it.get("value", "") if isinstance(it, dict) else None
        if not isinstance(k, str) or not MDKEY_RE.fullmatch(k):
            raise ApiError(400, "invalid", "Invalid value for field '%s.items[%d].key': '%s'."
                           % (field, i, k))
        if k in seen:
            raise ApiError(400, "invalid", "Metadata has duplicate keys: '%s'." % k)
        if not isinstance(v, str):
            raise ApiError(400, "invalid", "Invalid value for field '%s.items[%d].value'."
                           % (field, i))
        seen.add(k)
        total += len(k.encode()) + len(v.encode())
        out.append({"key": k, "value": v})
    if total > METADATA_MAX:
        raise ApiError(400, "invalid", "Metadata total size exceeds the limit of 512 KB "
                       "(%s has %d bytes)." % (field, total))
    return {"kind": "compute#metadata", "items": out}


def size_gb(v, field):
    if isinstance(v, bool):
        v = None
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise ApiError(400, "invalid", "Invalid value for field '%s': '%s'." % (field, v))
    if n < 1 or n > 65536:
        raise ApiError(400, "invalid", "Invalid value for field '%s': '%s'." % (field, v))
    return n


def insert_instance(body, request_id):
    if not isinstance(body, dict):
        raise ApiError(400, "invalid", "Invalid value for field 'resource'.")
    with L:
        if request_id and request_id in REQUEST_IDS:
            return snapshot(OPS[REQUEST_IDS[request_id]])
    name = body.get("name")
    if not name:
        raise ApiError(400, "required", "Required field 'resource.name' not specified")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.name': '%s'. Must be "
                       "a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'" % name)
    mt = body.get("machineType")
    if not mt:
        raise ApiError(400, "required", "Required field 'resource.machineType' not specified")
    m = re.fullmatch(r"(?:https?://[^/]+/compute/v1/)?(?:projects/%s/)?zones/%s/machineTypes/"
                     r"([^/]+)" % (re.escape(A.project), re.escape(A.zone)), str(mt))
    if not m or m.group(1) not in MACHINE_TYPES:
        raise ApiError(400, "invalid", "Invalid value for field 'resource.machineType': '%s'. "
                       "Machine type with name '%s' does not exist in zone '%s'."
                       % (mt, str(mt).rsplit("/", 1)[-1], A.zone))
    mtype = m.group(1)
    nics = body.get("networkInterfaces")
    if not nics:
        raise ApiError(400, "required",
                       "Required field 'resource.networkInterfaces' not specified")
    if not isinstance(nics, list) or not all(isinstance(n, dict) for n in nics):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.networkInterfaces'.")
    disks_in = body.get("disks")
    if not disks_in:
        raise ApiError(400, "required", "Required field 'resource.disks' not specified")
    if not isinstance(disks_in, list):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.disks'.")
    boots = [i for i, d in enumerate(disks_in) if isinstance(d, dict) and d.get("boot") is True]
    if len(boots) != 1:
        raise ApiError(400, "invalid", "Invalid value for field 'resource.disks': exactly one "
                       "disk must have boot: true.")
    order = boots + [i for i in range(len(disks_in)) if i not in boots]
    disks = []
    names = set()
    for idx, i in enumerate(order):
        d = disks_in[i]
        f = "resource.disks[%d]" % i
        if not isinstance(d, dict):
            raise ApiError(400, "invalid", "Invalid value for field '%s'." % f)
        ip = d.get("initializeParams")
        if not isinstance(ip, dict):
            raise ApiError(400, "required", "Required field '%s.initializeParams' not specified "
                           "(this server creates every disk from initializeParams)" % f)
        dev = d.get("deviceName", "persistent-disk-%d" % idx)
        if not isinstance(dev, str) or not NAME_RE.fullmatch(dev) or len(dev) > 36:
            raise ApiError(400, "invalid", "Invalid value for field '%s.deviceName': '%s' "
                           "(here: [a-z]([-a-z0-9]*[a-z0-9])?, at most 36 characters)"
                           % (f, dev))
        if idx > 0 and "deviceName" not in d:
            raise ApiError(400, "required", "Required field '%s.deviceName' not specified" % f)
        auto = d.get("autoDelete", False)
        if not isinstance(auto, bool):
            raise ApiError(400, "invalid", "Invalid value for field '%s.autoDelete'." % f)
        dname = ip.get("diskName", name if idx == 0 else "%s-%s" % (name, dev))
        if not isinstance(dname, str) or not NAME_RE.fullmatch(dname):
            raise ApiError(400, "invalid", "Invalid value for field '%s.initializeParams."
                           "diskName': '%s'." % (f, dname))
        if dname in names or dev in [x["deviceName"] for x in disks]:
            raise ApiError(400, "invalid", "Invalid value for field '%s': duplicate disk or "
                           "device name '%s'." % (f, dname))
        names.add(dname)
        disk = {"name": dname, "deviceName": dev, "boot": idx == 0, "autoDelete": auto,
                "index": idx}
        if idx == 0:
            src = ip.get("sourceImage")
            if not src:
                raise ApiError(400, "required", "Required field '%s.initializeParams."
                               "sourceImage' not specified" % f)
            iname = resolve_image(src)
            with L:
                img = IMAGES.get(iname) if iname else None
                if img is None:
                    raise ApiError(404, "notFound", "The resource 'projects/%s/global/images/"
                                   "%s' was not found" % (A.project, iname or src))
                if img["status"] != "READY":
                    raise ApiError(400, "resourceNotReady", "The resource 'projects/%s/global/"
                                   "images/%s' is not ready" % (A.project, iname))
                isize = int(img["diskSizeGb"])
            want = size_gb(ip["diskSizeGb"], f + ".initializeParams.diskSizeGb") \
                if "diskSizeGb" in ip else isize
            if want < isize:
                raise ApiError(400, "invalid", "Invalid value for field '%s.initializeParams."
                               "diskSizeGb': '%d'. Requested disk size cannot be smaller than "
                               "the image size (%d GB)." % (f, want, isize))
            disk.update(sizeGb=want, image=os.path.join(A.state, "images", iname, "disk.raw"),
                        imageName=iname, fmt="qcow2",
                        path=os.path.join(A.state, "disks", dname + ".qcow2"),
                        base=os.path.join(A.state, "disks", dname + ".base"))
        else:
            if "diskSizeGb" not in ip:
                raise ApiError(400, "required", "Required field '%s.initializeParams."
                               "diskSizeGb' not specified" % f)
            disk.update(sizeGb=size_gb(ip["diskSizeGb"], f + ".initializeParams.diskSizeGb"),
                        fmt="raw", path=os.path.join(A.state, "disks", dname + ".raw"))
        disks.append(disk)
    md = check_metadata(body.get("metadata"), "resource.metadata")
    labels = body.get("labels", {})
    if not isinstance(labels, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and
            re.fullmatch(r"[a-z][a-z0-9_-]{0,62}", k) and re.fullmatch(r"[a-z0-9_-]{0,63}", v)
            for k, v in labels.items()):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.labels'.")
    sched = body.get("scheduling", {})
    if not isinstance(sched, dict):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.scheduling'.")
    pm = sched.get("provisioningModel", "STANDARD")
    if pm not in ("SPOT", "STANDARD"):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.scheduling."
                       "provisioningModel': '%s'." % pm)
    if not isinstance(sched.get("preemptible", False), bool):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.scheduling."
                       "preemptible'.")
    ita = sched.get("instanceTerminationAction")
    if ita is not None and ita not in ("DELETE", "STOP"):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.scheduling."
                       "instanceTerminationAction': '%s'." % ita)
    if ita is not None and pm != "SPOT" and sched.get("preemptible") is not True:
        raise ApiError(400, "invalid", "Invalid value for field 'resource.scheduling."
                       "instanceTerminationAction': only for SPOT or preemptible VMs.")
    sas = body.get("serviceAccounts", [])
    if not isinstance(sas, list):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.serviceAccounts'.")

    with L:
        if name in INSTANCES:
            raise ApiError(409, "alreadyExists", "The resource 'projects/%s/zones/%s/instances/"
                           "%s' already exists" % (A.project, A.zone, name))
        for d in disks:
            if d["name"] in DISKS:
                raise ApiError(409, "alreadyExists", "The resource 'projects/%s/zones/%s/"
                               "disks/%s' already exists" % (A.project, A.zone, d["name"]))
        used = sum(MACHINE_TYPES[i.res["machineType"].rsplit("/", 1)[1]][0]
                   for i in INSTANCES.values())
        if QUOTA["cpus"] and used + MACHINE_TYPES[mtype][0] > QUOTA["cpus"]:
            raise ApiError(403, "quotaExceeded", "Quota 'CPUS' exceeded. Limit: %.1f in region "
                           "%s." % (QUOTA["cpus"], region()))
        if QUOTA["count"] > 0:
            QUOTA["count"] -= 1
            if QUOTA["kind"] == "quotaExceeded":
                raise ApiError(403, "quotaExceeded", "Quota 'CPUS' exceeded. Limit: 8.0 in "
                               "region %s." % region())
            op = new_op("insert", "%s/instances/%s" % (zone_rel(), name), True, new_id())
            if request_id:
                REQUEST_IDS[request_id] = op["name"]
            resp = snapshot(op)
            threading.Timer(0.5, finish_op, (op, "ZONE_RESOURCE_POOL_EXHAUSTED",
                            "The zone 'projects/%s/zones/%s' does not have enough resources "
                            "available to fulfill the request.  Try a different zone, or try "
                            "again later." % (A.project, A.zone), 503)).start()
            return resp
        iid = new_id()
        rel = "%s/instances/%s" % (zone_rel(), name)
        res = {"kind": "compute#instance", "id": iid, "name": name,
               "creationTimestamp": now_rfc3339(), "status": "PROVISIONING",
               "machineType": compute_url("%s/machineTypes/%s" % (zone_rel(), mtype)),
               "zone": compute_url(zone_rel()), "selfLink": compute_url(rel),
               "description": body.get("description", ""),
               "metadata": dict(md, fingerprint=base64.b64encode(secrets.token_bytes(8))
                                .decode()),
               "labels": labels, "labelFingerprint": "42WmSpB8rSM=",
               "scheduling": {"provisioningModel": pm,
                              "preemptible": bool(sched.get("preemptible", pm == "SPOT")),
                              "automaticRestart": False if pm == "SPOT" else
                              sched.get("automaticRestart", True),
                              "onHostMaintenance": "TERMINATE" if pm == "SPOT" else
                              sched.get("onHostMaintenance", "MIGRATE")},
               "networkInterfaces": [dict(n, name="nic%d" % i, networkIP="169.254.169.15",
                                          kind="compute#networkInterface")
                                     for i, n in enumerate(nics)],
               "serviceAccounts": sas, "cpuPlatform": "Intel Broadwell",
               "disks": [{"kind": "compute#attachedDisk", "type": "PERSISTENT",
                          "mode": "READ_WRITE", "deviceName": d["deviceName"],
                          "boot": d["boot"], "autoDelete": d["autoDelete"],
                          "index": d["index"], "interface": "SCSI",
                          "diskSizeGb": str(d["sizeGb"]),
                          "source": compute_url("%s/disks/%s" % (zone_rel(), d["name"]))}
                         for d in disks]}
        if ita:
            res["scheduling"]["instanceTerminationAction"] = ita
        inst = Instance(res, res["scheduling"], disks)
        INSTANCES[name] = inst
        for d in disks:
            DISKS[d["name"]] = {
                "path": d["path"], "base": d.get("base"),
                "res": {"kind": "compute#disk", "id": new_id(), "name": d["name"],
                        "creationTimestamp": now_rfc3339(), "sizeGb": str(d["sizeGb"]),
                        "zone": compute_url(zone_rel()), "status": "READY",
                        "type": compute_url("%s/diskTypes/pd-balanced" % zone_rel()),
                        "selfLink": compute_url("%s/disks/%s" % (zone_rel(), d["name"])),
                        "users": [compute_url(rel)]}}
            if d["boot"]:
                DISKS[d["name"]]["res"]["sourceImage"] = compute_url(
                    "projects/%s/global/images/%s" % (A.project, d["imageName"]))
        op = new_op("insert", rel, True, iid)
        if request_id:
            REQUEST_IDS[request_id] = op["name"]
        resp = snapshot(op)
    threading.Thread(target=inst.start, args=(op,), daemon=True).start()
    return resp


def delete_instance(inst, op_type="delete"):
    with L:
        inst.deleting = True
        inst.res["status"] = "STOPPING"
        op = new_op(op_type, "%s/instances/%s" % (zone_rel(), inst.name), True, inst.res["id"])
        resp = snapshot(op)

    def run():
        inst.remove()
        finish_op(op)
    threading.Thread(target=run, daemon=True).start()
    return resp


def preempt(inst):
    with L:
        if inst.deleting:
            return
        inst.preempted = True
    op = new_op("compute.instances.preempted", "%s/instances/%s" % (zone_rel(), inst.name),
                True, inst.res["id"])
    op["statusMessage"] = "Instance was preempted."
    op["user"] = "system"
    inst.kill()
    with L:
        inst.res["status"] = "TERMINATED"
        inst.res["lastStopTimestamp"] = now_rfc3339()
        CHANGED.notify_all()
    finish_op(op)
    if inst.sched.get("instanceTerminationAction") == "DELETE":
        delete_instance(inst)


def filter_instances(items, flt):
    if not flt:
        return items
    out = items
    for m in re.finditer(r"\(?\s*name\s+(eq|ne)\s+(\"[^\"]*\"|'[^']*'|\S+?)\s*\)?(?:\s|$)",
                         flt):
        rx = m.group(2).strip("\"'")
        keep = m.group(1) == "eq"
        out = [i for i in out if bool(re.fullmatch(rx, i["name"])) == keep]
    for m in re.finditer(r"labels\.([a-z0-9_-]+)\s*(=|eq|!=|ne)\s*(\"[^\"]*\"|'[^']*'|[^\s)]+)",
                         flt):
        k, op, v = m.group(1), m.group(2), m.group(3).strip("\"'")
        if op in ("=", "eq"):
            out = [i for i in out if i.get("labels", {}).get(k) == v]
        else:
            out = [i for i in out if i.get("labels", {}).get(k) != v]
    for m in re.finditer(r"(?<![.\w])name\s*(=|!=)\s*(\"[^\"]*\"|'[^']*'|[^\s)]+)", flt):
        v = m.group(2).strip("\"'")
        out = [i for i in out if (i["name"] == v) == (m.group(1) == "=")]
    for m in re.finditer(r"status\s*(=|eq)\s*\"?([A-Z_]+)", flt):
        out = [i for i in out if i.get("status") == m.group(2)]
    return out


def serial_output(inst, port, start):
    path = os.path.join(inst.dir, "serial%d.log" % port)
    try:
        with open(path, "rb") as f:
            total = os.fstat(f.fileno()).st_size
            lo = max(0, total - SERIAL_BUF)
            if start is None or start < lo:
                start = lo
            if start > total:
                start = total
            f.seek(start)
            data = f.read(total - start)
    except FileNotFoundError:
        total, start, data = 0, 0, b""
    return {"kind": "compute#serialPortOutput", "contents": data.decode("utf-8", "replace"),
            "start": str(start), "next": str(start + len(data)),
            "selfLink": compute_url("%s/instances/%s/serialPort?port=%d" % (
                zone_rel(), inst.name, port))}


# ---- HTTP -------------------------------------------------------------------

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gcefake"
    sys_version = ""
    instance = None     # the instance whose metadata server this is, or None

    def log_message(self, fmt, *args):
        pass

    def log_request(self, code="-", size="-"):
        path = self.path
        q = path.find("?")
        if q >= 0 and re.search(r"token|assertion|key", path[q:], re.I):
            path = path[:q] + "?..."
        log("%s%s %s %s" % ("[md %s] " % self.instance.name if self.instance else "",
                            self.command, path, code))

    # --- plumbing ---
    def body(self):
        if getattr(self, "_body", None) is not None:
            return self._body
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                line = self.rfile.readline(100)
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline(1000) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(n))
                self.rfile.readline(10)
            self._body = b"".join(parts)
        else:
            n = int(self.headers.get("Content-Length") or 0)
            self._body = self.rfile.read(n) if n else b""
        return self._body

    def body_to_file(self, path):
        """Streams the request body to PATH; its length."""
        n = 0
        with open(path, "wb") as f:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                f.write(self.body())
                n = len(self._body)
            else:
                left = int(self.headers.get("Content-Length") or 0)
                while left > 0:
                    c = self.rfile.read(min(left, 1 << 20))
                    if not c:
                        raise ConnectionError("short body")
                    f.write(c)
                    left -= len(c)
                    n += len(c)
        self._body = b""
        return n

    def json_body(self):
        b = self.body()
        if not b:
            return {}
        try:
            return json.loads(b)
        except ValueError:
            raise ApiError(400, "parseError", "Parse Error")

    def send(self, code, data, ctype="application/json; charset=UTF-8", headers=()):
        if self.request_id and code == 200 and isinstance(data, dict) and \
                data.get("kind") == "compute#operation":
            with L:
                REQUEST_IDS[self.request_id] = data["name"]
        if isinstance(data, (dict, list)):
            data = (json.dumps(data, indent=1) + "\n").encode()
        elif isinstance(data, str):
            data = data.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error_env(self, e):
        err = {"message": e.message, "domain": "global", "reason": e.reason}
        err.update(e.extra)
        hdrs = []
        if e.code == 401:
            hdrs.append(("WWW-Authenticate", 'Bearer realm="https://accounts.google.com/"'))
        self.send(e.code, {"error": {"code": e.code, "message": e.message, "errors": [err],
                                     "status": STATUS_NAMES.get(e.code, "UNKNOWN")}},
                  headers=hdrs)

    def cut(self):
        """The network cut: no response, the connection closed."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        log("%s %s (cut)" % (self.command, self.path.split("?")[0]))

    def require_token(self, scope=None):
        h = self.headers.get("Authorization", "")
        if not h.startswith("Bearer ") or not token_ok(h[7:].strip()):
            raise ApiError(401, "authError", AUTH_MSG,
                           {"location": "Authorization", "locationType": "header"})
        with L:
            t = TOKENS.get(h[7:].strip())
            inst = INSTANCES.get(t["instance"]) if t and t["instance"] else None
        # an instance's token carries the scopes it was started with
        if inst is not None and scope and SCOPE_ALL not in instance_scopes(inst) \
                and scope not in instance_scopes(inst):
            raise ApiError(403, "insufficientPermissions", "Request had insufficient "
                           "authentication scopes.")
        self.token_instance = inst

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def dispatch(self):
        self._body = None
        self.request_id = None
        raw, _, qs = self.path.partition("?")
        self.query = {k: v[-1] for k, v in urllib.parse.parse_qs(qs, keep_blank_values=True)
                      .items()}
        segs = raw.split("/")[1:]
        try:
            if raw.startswith(("/compute/", "/storage/", "/upload/", "/download/", "/token")) \
                    and time.time() < OUTAGE["until"]:
                return self.cut()
            self.route(raw, segs)
        except ApiError as e:
            self.send_error_env(e)
        except (ConnectionError, BrokenPipeError):
            self.close_connection = True
        except Exception as e:  # a bug here: say so, keep serving
            log("internal error on %s %s: %r" % (self.command, raw, e))
            self.send_error_env(ApiError(500, "backendError", "Internal error: %r" % e))
        finally:
            if self._body is None and self.command in ("POST", "PUT", "PATCH") \
                    and not self.close_connection:
                try:
                    self.body()
                except Exception:
                    self.close_connection = True

    def route(self, raw, segs):
        if raw == "/token":
            return self.handle_token()
        if segs[:1] == ["fake"]:
            return self.handle_fake(segs[1:])
        if segs[:2] == ["compute", "v1"]:
            self.require_token()
            return self.handle_compute([urllib.parse.unquote(s) for s in segs[2:]])
        if segs[:2] in (["storage", "v1"], ["upload", "storage"], ["download", "storage"]):
            self.require_token()
            return self.handle_storage(segs)
        raise ApiError(404, "notFound", "Not Found")

    # --- /token ---
    def handle_token(self):
        if self.command != "POST":
            return self.send(405, {"error": "invalid_request",
                                   "error_description": "POST only"})
        ct = self.headers.get("Content-Type", "")
        if not ct.startswith("application/x-www-form-urlencoded"):
            self.body()
            return self.send(400, {"error": "invalid_request",
                                   "error_description": "Content-Type must be "
                                   "application/x-www-form-urlencoded"})
        form = urllib.parse.parse_qs(self.body().decode("utf-8", "replace"),
                                     keep_blank_values=True)
        gt = form.get("grant_type", [""])
        if gt != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
            return self.send(400, {"error": "unsupported_grant_type",
                                   "error_description": "Invalid grant_type: %s" % gt[-1]})
        asrt = form.get("assertion", [])
        if len(asrt) != 1 or not asrt[0]:
            return self.send(400, {"error": "invalid_request",
                                   "error_description": "Missing required parameter: "
                                   "assertion"})
        why = check_assertion(asrt[0])
        if why:
            return self.send(400, {"error": "invalid_grant", "error_description": why})
        self.send(200, {"access_token": issue_token(), "expires_in": A.token_lifetime - 1,
                        "token_type": "Bearer"}, headers=[("Cache-Control", "no-store")])

    # --- /fake ---
    def handle_fake(self, segs):
        """Control endpoints, no auth: revoke-tokens, quota?count=K&kind=
        quotaExceeded|exhausted[&cpus=N: the region's CPUs, 0: no limit], preempt?instance=NAME, outage?seconds=S,
        bucket?name=B (all POST), state (GET)."""
        q = dict(self.query)
        if self.command == "POST" and self.headers.get("Content-Type", "").startswith(
                "application/json"):
            b = self.json_body()
            if isinstance(b, dict):
                q.update({k: str(v) for k, v in b.items()})
        what = segs[0] if segs else ""
        if what == "state" and self.command == "GET":
            return self.send(200, fake_state())
        if self.command != "POST":
            raise ApiError(405, "badRequest", "POST only")
        if what == "revoke-tokens":
            with L:
                n = len(TOKENS)
                TOKENS.clear()
            return self.send(200, {"revoked": n})
        if what == "quota":
            kind = q.get("kind", "quotaExceeded")
            if kind not in ("quotaExceeded", "exhausted"):
                raise ApiError(400, "invalid", "kind: quotaExceeded or exhausted")
            with L:
                QUOTA.update(count=int(q.get("count", "1")), kind=kind,
                             cpus=int(q.get("cpus", QUOTA["cpus"])))
                resp = dict(QUOTA)
            return self.send(200, resp)
        if what == "preempt":
            with L:
                inst = INSTANCES.get(q.get("instance", ""))
            if inst is None:
                raise ApiError(404, "notFound", "no instance %r" % q.get("instance"))
            preempt(inst)
            return self.send(200, {"preempted": inst.name})
        if what == "outage":
            s = float(q.get("seconds", "10"))
            OUTAGE["until"] = time.time() + s
            return self.send(200, {"until": OUTAGE["until"]})
        if what == "bucket":
            return self.send(200, make_bucket(q.get("name", "")))
        raise ApiError(404, "notFound", "unknown control endpoint")

    # --- compute ---
    def handle_compute(self, s):
        c = self.command
        if len(s) < 2 or s[0] != "projects":
            raise ApiError(404, "notFound", "Not Found")
        if s[1] != A.project:
            raise ApiError(404, "notFound", "The resource 'projects/%s' was not found" % s[1])
        s = s[2:]
        rid = self.query.get("requestId")
        if rid and c in ("POST", "DELETE") and s[-1:] != ["wait"]:
            with L:
                done = REQUEST_IDS.get(rid)
                resp = snapshot(OPS[done]) if done in OPS else None
            if resp:    # a retry of a request already made: its operation
                return self.send(200, resp)
            self.request_id = rid
        if not s and c == "GET":
            return self.send(200, {"kind": "compute#project", "id": project_number(),
                                   "name": A.project, "creationTimestamp": now_rfc3339(0),
                                   "selfLink": compute_url("projects/" + A.project),
                                   "defaultServiceAccount": A.client_email,
                                   "quotas": [{"metric": "CPUS", "limit": 8.0, "usage": 0.0}]})
        if s[:1] == ["global"]:
            return self.handle_global(s[1:])
        if s[:1] == ["zones"] and len(s) >= 2:
            if s[1] != A.zone:
                raise ApiError(404, "notFound", "The resource 'projects/%s/zones/%s' was not "
                               "found" % (A.project, s[1]))
            return self.handle_zone(s[2:])
        if s[:1] == ["regions"] and len(s) == 2 and c == "GET":
            if s[1] != region():
                raise ApiError(404, "notFound", "The resource 'projects/%s/regions/%s' was "
                               "not found" % (A.project, s[1]))
            return self.send(200, {"kind": "compute#region", "name": region(), "status": "UP",
                                   "id": "1000", "selfLink": compute_url(
                                       "projects/%s/regions/%s" % (A.project, region())),
                                   "quotas": [{"metric": "CPUS", "limit": 8.0,
                                               "usage": 0.0}]})
        raise ApiError(404, "notFound", "Not Found")

    def op_get(self, name, zonal, wait):
        with L:
            op = OPS.get(name)
            if op is None or ("zone" in op) != zonal:
                where = zone_rel() if zonal else "projects/%s/global" % A.project
                raise ApiError(404, "notFound", "The resource '%s/operations/%s' was not found"
                               % (where, name))
            if wait:
                CHANGED.wait_for(lambda: op["status"] == "DONE" or STOPPING.is_set(), 120)
            resp = snapshot(op)
        self.send(200, resp)

    def list_ops(self, zonal, rel):
        flt = self.query.get("filter", "")
        with L:
            items = [snapshot(o) for o in OPS.values() if ("zone" in o) == zonal]
        m = re.search(r"operationType\s*(?:=|eq)\s*\"?([A-Za-z.]+)", flt)
        if m:
            items = [o for o in items if m.group(1) in o["operationType"]]
        self.send(200, {"kind": "compute#operationList", "id": rel, "items": items,
                        "selfLink": compute_url(rel)})

    def handle_global(self, s):
        c = self.command
        if s[:1] == ["operations"]:
            if len(s) == 1 and c == "GET":
                return self.list_ops(False, "projects/%s/global/operations" % A.project)
            if len(s) == 2 and c == "GET":
                return self.op_get(s[1], False, False)
            if len(s) == 3 and s[2] == "wait" and c == "POST":
                return self.op_get(s[1], False, True)
        if s[:1] == ["images"]:
            rel = "projects/%s/global/images" % A.project
            if len(s) == 1 and c == "GET":
                with L:
                    items = [snapshot(i) for i in IMAGES.values()]
                return self.send(200, {"kind": "compute#imageList", "id": rel,
                                       "items": items, "selfLink": compute_url(rel)})
            if len(s) == 1 and c == "POST":
                return self.send(200, self.insert_image(self.json_body()))
            if len(s) == 2 and c in ("GET", "DELETE"):
                with L:
                    img = IMAGES.get(s[1])
                    if img is None:
                        raise ApiError(404, "notFound", "The resource '%s/%s' was not found"
                                       % (rel, s[1]))
                    resp = snapshot(img)
                    if c == "GET":
                        pass
                    elif img["status"] == "PENDING":
                        raise ApiError(400, "resourceNotReady", "The resource '%s/%s' is not "
                                       "ready" % (rel, s[1]))
                    else:
                        del IMAGES[s[1]]
                        op = new_op("delete", "%s/%s" % (rel, s[1]), False, img["id"])
                if c == "GET":
                    return self.send(200, resp)
                shutil.rmtree(os.path.join(A.state, "images", s[1]), ignore_errors=True)
                resp = snapshot(op)
                threading.Timer(0.2, finish_op, (op,)).start()
                return self.send(200, resp)
        raise ApiError(404, "notFound", "Not Found")

    def insert_image(self, body):
        if not isinstance(body, dict):
            raise ApiError(400, "invalid", "Invalid value for field 'resource'.")
        name = body.get("name")
        if not name:
            raise ApiError(400, "required", "Required field 'resource.name' not specified")
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise ApiError(400, "invalid", "Invalid value for field 'resource.name': '%s'. "
                           "Must be a match of regex '[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?'" % name)
        raw = body.get("rawDisk")
        src = raw.get("source") if isinstance(raw, dict) else None
        if not src:
            raise ApiError(400, "required", "Required field 'resource.rawDisk.source' not "
                           "specified (this server makes images from rawDisk only)")
        if parse_gcs_url(src) is None:
            raise ApiError(400, "invalid", "Invalid value for field 'resource.rawDisk.source': "
                           "'%s'. The URL is malformed." % src)
        feats = body.get("guestOsFeatures", [])
        if not isinstance(feats, list) or not all(
                isinstance(f, dict) and isinstance(f.get("type"), str) for f in feats):
            raise ApiError(400, "invalid", "Invalid value for field 'resource.guestOsFeatures'.")
        rel = "projects/%s/global/images/%s" % (A.project, name)
        with L:
            if name in IMAGES:
                raise ApiError(409, "alreadyExists", "The resource '%s' already exists" % rel)
            img = {"kind": "compute#image", "id": new_id(), "name": name,
                   "creationTimestamp": now_rfc3339(), "status": "PENDING",
                   "sourceType": "RAW", "rawDisk": {"source": src, "containerType": "TAR"},
                   "guestOsFeatures": feats, "selfLink": compute_url(rel),
                   "description": body.get("description", ""),
                   "labels": body.get("labels", {}), "family": body.get("family", ""),
                   "architecture": body.get("architecture", "X86_64"),
                   "diskSizeGb": "0", "archiveSizeBytes": "0"}
            IMAGES[name] = img
            op = new_op("insert", rel, False, img["id"])
            resp = snapshot(op)
        threading.Thread(target=build_image, args=(op, img, src), daemon=True).start()
        return resp

    def get_instance(self, name):
        with L:
            inst = INSTANCES.get(name)
        if inst is None:
            raise ApiError(404, "notFound", "The resource 'projects/%s/zones/%s/instances/%s' "
                           "was not found" % (A.project, A.zone, name))
        return inst

    def handle_zone(self, s):
        c = self.command
        if not s and c == "GET":
            return self.send(200, {"kind": "compute#zone", "id": "2000", "name": A.zone,
                                   "status": "UP", "region": compute_url(
                                       "projects/%s/regions/%s" % (A.project, region())),
                                   "selfLink": compute_url(zone_rel())})
        if s[:1] == ["operations"]:
            if len(s) == 1 and c == "GET":
                return self.list_ops(True, zone_rel() + "/operations")
            if len(s) == 2 and c == "GET":
                return self.op_get(s[1], True, False)
            if len(s) == 3 and s[2] == "wait" and c == "POST":
                return self.op_get(s[1], True, True)
        if s[:1] == ["machineTypes"] and c == "GET":
            names = s[1:2] or sorted(MACHINE_TYPES)
            items = []
            for n in names:
                if n not in MACHINE_TYPES:
                    raise ApiError(404, "notFound", "The resource '%s/machineTypes/%s' was not "
                                   "found" % (zone_rel(), n))
                items.append({"kind": "compute#machineType", "name": n, "id": "3000",
                              "guestCpus": MACHINE_TYPES[n][0],
                              "memoryMb": MACHINE_TYPES[n][1], "zone": A.zone,
                              "selfLink": compute_url("%s/machineTypes/%s" % (zone_rel(), n))})
            if len(s) == 2:
                return self.send(200, items[0])
            return self.send(200, {"kind": "compute#machineTypeList", "items": items})
        if s[:1] == ["disks"]:
            rel = zone_rel() + "/disks"
            if len(s) == 1 and c == "GET":
                with L:
                    items = [snapshot(d["res"]) for d in DISKS.values()]
                return self.send(200, {"kind": "compute#diskList", "items": items,
                                       "selfLink": compute_url(rel)})
            if len(s) == 2 and c in ("GET", "DELETE"):
                with L:
                    d = DISKS.get(s[1])
                    if d is None:
                        raise ApiError(404, "notFound", "The resource '%s/%s' was not found"
                                       % (rel, s[1]))
                    resp = snapshot(d["res"])
                    if c == "GET":
                        pass
                    elif d["res"]["users"]:
                        raise ApiError(400, "resourceInUseByAnotherResource",
                                       "The disk resource '%s/%s' is already being used by "
                                       "'%s'" % (rel, s[1], d["res"]["users"][0]))
                    else:
                        del DISKS[s[1]]
                        op = new_op("delete", "%s/%s" % (rel, s[1]), True, d["res"]["id"])
                if c == "GET":
                    return self.send(200, resp)
                for p in (d["path"], d["base"]):
                    if p and os.path.exists(p):
                        os.unlink(p)
                resp = snapshot(op)
                threading.Timer(0.2, finish_op, (op,)).start()
                return self.send(200, resp)
        if s[:1] == ["instances"]:
            rel = zone_rel() + "/instances"
            if len(s) == 1 and c == "GET":
                with L:
                    items = [snapshot(i.res) for i in INSTANCES.values()]
                items = filter_instances(items, self.query.get("filter", ""))
                return self.send(200, {"kind": "compute#instanceList", "id": rel,
                                       "items": items, "selfLink": compute_url(rel)})
            if len(s) == 1 and c == "POST":
                body = self.json_body()
                return self.send(200, insert_instance(body, self.query.get("requestId")))
            if len(s) >= 2:
                inst = self.get_instance(s[1])
                if len(s) == 2 and c == "GET":
                    return self.send(200, snapshot(inst.res))
                if len(s) == 2 and c == "DELETE":
                    by = getattr(self, "token_instance", None)
                    if by is not None:
                        log("instance %s deletes %s" % (by.name, inst.name))
                        with L:
                            SELF_DELETED.append(inst.name)
                    with L:
                        if inst.deleting:
                            raise ApiError(400, "resourceNotReady", "The resource '%s/%s' is "
                                           "not ready" % (rel, s[1]))
                    return self.send(200, delete_instance(inst))
                if len(s) == 3 and s[2] == "setMetadata" and c == "POST":
                    return self.send(200, self.set_metadata(inst, self.json_body()))
                if len(s) == 3 and s[2] == "serialPort" and c == "GET":
                    try:
                        port = int(self.query.get("port", "1"))
                        start = self.query.get("start")
                        start = int(start) if start not in (None, "") else None
                    except ValueError:
                        raise ApiError(400, "invalid", "Invalid value for field 'port' or "
                                       "'start'.")
                    if port not in (1, 2, 3, 4):
                        raise ApiError(400, "invalid", "Invalid value for field 'port': '%d'. "
                                       "Must be between 1 and 4." % port)
                    if start is not None and start < 0:
                        raise ApiError(400, "invalid", "Invalid value for field 'start'.")
                    return self.send(200, serial_output(inst, port, start))
        raise ApiError(404, "notFound", "Not Found")

    def set_metadata(self, inst, body):
        if not isinstance(body, dict):
            raise ApiError(400, "invalid", "Invalid value for field 'resource'.")
        md = check_metadata(body, "resource")
        with L:
            if inst.deleting:
                raise ApiError(400, "resourceNotReady", "The resource is not ready")
            cur = inst.res["metadata"]["fingerprint"]
            if body.get("fingerprint") != cur:
                raise ApiError(412, "conditionNotMet", "Supplied fingerprint does not match "
                               "current metadata fingerprint.",
                               {"location": "If-Match", "locationType": "header"})
            inst.res["metadata"] = dict(md, fingerprint=base64.b64encode(
                secrets.token_bytes(8)).decode())
            op = new_op("setMetadata", "%s/instances/%s" % (zone_rel(), inst.name), True,
                        inst.res["id"])
            CHANGED.notify_all()
            resp = snapshot(op)
        threading.Timer(0.2, finish_op, (op,)).start()
        return resp

    # --- storage ---
    def handle_storage(self, segs):
        """segs: the raw path segments, each percent-decoded exactly once here."""
        c = self.command
        upload = segs[0] == "upload"
        try:
            s = [urllib.parse.unquote(x, errors="strict")
                 for x in segs[2 if segs[0] == "storage" else 3:]]
        except UnicodeDecodeError:
            raise ApiError(400, "invalid", "The object name is not UTF-8.")
        host = self.headers.get("Host") or BASE[len("http://"):]
        if len(s) < 2 or s[0] != "b":
            raise ApiError(404, "notFound", "Not Found")
        b = s[1]
        need_bucket(b)
        if len(s) == 2 and c == "GET" and not upload:
            bk = dict(BUCKETS[b], selfLink="http://%s/storage/v1/b/%s" % (host, b))
            return self.send(200, bk)
        if len(s) == 3 and s[2] == "o" and upload and c in ("POST", "PUT"):
            return self.upload(b, host)
        if len(s) == 3 and s[2] == "o" and c == "GET":
            prefix = self.query.get("prefix", "")
            try:
                maxr = max(1, min(1000, int(self.query.get("maxResults", "1000"))))
            except ValueError:
                raise ApiError(400, "invalid", "Invalid value for maxResults")
            after = self.query.get("pageToken", "")
            if after:
                try:
                    after = base64.urlsafe_b64decode(after.encode()).decode()
                except ValueError:
                    raise ApiError(400, "invalid", "Invalid pageToken")
            items = [m for m in list_objects(b) if m["name"].startswith(prefix)
                     and (not after or m["name"] > after)]
            resp = {"kind": "storage#objects"}
            if len(items) > maxr:
                items = items[:maxr]
                resp["nextPageToken"] = base64.urlsafe_b64encode(
                    items[-1]["name"].encode()).decode()
            resp["items"] = [obj_links(m, host) for m in items]
            return self.send(200, resp)
        if len(s) == 4 and s[2] == "o" and not upload:
            m = obj_meta(b, s[3])
            if m is None:
                raise ApiError(404, "notFound", "No such object: %s/%s" % (b, s[3]))
            gm = self.query.get("ifGenerationMatch")
            if gm is not None and gm != m["generation"]:
                raise ApiError(412, "conditionNotMet", "At least one of the pre-conditions "
                               "you specified did not hold.")
            if c == "DELETE":
                with L:
                    base = obj_base(b, s[3])
                    for ext in (".json", ".data"):
                        try:
                            os.unlink(base + ext)
                        except FileNotFoundError:
                            pass
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if c in ("GET", "HEAD"):
                if self.query.get("alt") == "media" or segs[0] == "download":
                    return self.download(b, m)
                return self.send(200, obj_links(m, host))
        raise ApiError(404, "notFound", "Not Found")

    def upload(self, b, host):
        ut = self.query.get("uploadType", "")
        tmpdir = os.path.join(A.state, "storage", ".tmp")
        os.makedirs(tmpdir, exist_ok=True)
        if ut == "media" and self.command == "POST":
            name = self.query.get("name")
            if not name:
                raise ApiError(400, "required", "Required parameter: name")
            self.check_if_generation(b, name)
            tmp = os.path.join(tmpdir, secrets.token_hex(8))
            try:
                self.body_to_file(tmp)
                m = store_object(b, name, tmp, self.headers.get("Content-Type"))
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            return self.send(200, obj_links(m, host))
        if ut == "resumable" and self.command == "POST":
            meta = self.json_body()
            name = self.query.get("name") or (meta.get("name") if isinstance(meta, dict)
                                              else None)
            if not name:
                raise ApiError(400, "required", "Required parameter: name")
            self.check_if_generation(b, name)
            uid = secrets.token_urlsafe(24)
            path = os.path.join(tmpdir, "up-" + hashlib.sha256(uid.encode()).hexdigest()[:32])
            open(path, "wb").close()
            with L:
                UPLOADS[uid] = {"bucket": b, "name": name, "path": path, "got": 0,
                                "ctype": (meta.get("contentType") if isinstance(meta, dict)
                                          else None) or
                                self.headers.get("X-Upload-Content-Type")}
            loc = "http://%s/upload/storage/v1/b/%s/o?uploadType=resumable&upload_id=%s" % (
                host, urllib.parse.quote(b), uid)
            return self.send(200, b"", "text/plain", headers=[("Location", loc)])
        if ut == "resumable" and self.command == "PUT":
            uid = self.query.get("upload_id", "")
            with L:
                up = UPLOADS.get(uid)
            if up is None or up["bucket"] != b:
                raise ApiError(404, "notFound", "No such upload session")
            cr = self.headers.get("Content-Range", "")
            data = self.body()
            total = None
            m = re.fullmatch(r"bytes (?:(\d+)-(\d+)|\*)/(\d+|\*)", cr.strip()) if cr else None
            if cr and not m:
                raise ApiError(400, "invalid", "Invalid Content-Range")
            if m:
                if m.group(3) != "*":
                    total = int(m.group(3))
                if m.group(1) is not None:
                    if int(m.group(1)) != up["got"] or \
                            int(m.group(2)) - int(m.group(1)) + 1 != len(data):
                        raise ApiError(400, "invalid", "Content-Range does not continue the "
                                       "upload (have %d bytes)" % up["got"])
            else:
                total = up["got"] + len(data)
            with open(up["path"], "ab") as f:
                f.write(data)
            up["got"] += len(data)
            if total is not None and up["got"] >= total:
                with L:
                    UPLOADS.pop(uid, None)
                m = store_object(b, up["name"], up["path"], up["ctype"])
                return self.send(200, obj_links(m, host))
            hdrs = [("Range", "bytes=0-%d" % (up["got"] - 1))] if up["got"] else []
            return self.send(308, b"", "text/plain", headers=hdrs)
        raise ApiError(400, "invalid", "Invalid upload (uploadType=%s, %s); this server "
                       "supports media and resumable" % (ut, self.command))

    def check_if_generation(self, b, name):
        gm = self.query.get("ifGenerationMatch")
        if gm is None:
            return
        m = obj_meta(b, name)
        if (gm == "0" and m is not None) or (gm != "0" and (m is None or
                                                            m["generation"] != gm)):
            raise ApiError(412, "conditionNotMet", "At least one of the pre-conditions you "
                           "specified did not hold.")

    def download(self, b, m):
        size = int(m["size"])
        start, end = 0, size - 1
        code = 200
        rng = self.headers.get("Range")
        if rng:
            r = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if not r or (not r.group(1) and not r.group(2)):
                raise ApiError(400, "invalid", "Invalid Range header")
            if r.group(1):
                start = int(r.group(1))
                if r.group(2):
                    end = min(int(r.group(2)), size - 1)
            else:
                start = max(0, size - int(r.group(2)))
            if start >= size or end < start:
                self.send(416, {"error": {"code": 416, "message": "Requested range not "
                                          "satisfiable", "errors": [{"message": "Requested "
                                          "range not satisfiable", "domain": "global",
                                          "reason": "requestedRangeNotSatisfiable"}],
                                          "status": "OUT_OF_RANGE"}},
                          headers=[("Content-Range", "bytes */%d" % size)])
                return
            code = 206
        try:
            f = open(obj_base(b, m["name"]) + ".data", "rb")
        except FileNotFoundError:
            raise ApiError(404, "notFound", "No such object: %s/%s" % (b, m["name"]))
        with f:
            self.send_response(code)
            self.send_header("Content-Type", m["contentType"])
            self.send_header("Content-Length", str(end - start + 1 if size else 0))
            self.send_header("x-goog-generation", m["generation"])
            self.send_header("x-goog-hash", "md5=" + m["md5Hash"])
            self.send_header("Accept-Ranges", "bytes")
            if code == 206:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
            self.end_headers()
            if self.command == "HEAD" or size == 0:
                return
            f.seek(start)
            left = end - start + 1
            while left > 0:
                c = f.read(min(left, 1 << 20))
                if not c:
                    break
                self.wfile.write(c)
                left -= len(c)


class MetadataHandler(Handler):
    """An instance's metadata server (and storage, for its guest)."""

    def route(self, raw, segs):
        if segs[:2] in (["storage", "v1"], ["upload", "storage"], ["download", "storage"]):
            self.require_token(SCOPE_STORAGE)
            return self.handle_storage(segs)
        if segs[:2] == ["compute", "v1"]:
            self.require_token(SCOPE_COMPUTE)
            return self.handle_compute([urllib.parse.unquote(s) for s in segs[2:]])
        if self.headers.get("Metadata-Flavor") != "Google" or \
                self.headers.get("X-Forwarded-For"):
            return self.send(403, "Your client does not have permission to get URL %s from "
                             "this server. Missing Metadata-Flavor:Google header.\n" % raw,
                             "text/html; charset=UTF-8")
        if self.command not in ("GET", "HEAD"):
            return self.md_send(405, "Method not allowed\n")
        p = urllib.parse.unquote(raw)
        inst = self.instance
        apre = "/computeMetadata/v1/instance/attributes"
        if p == apre or p.startswith(apre + "/"):
            key = p[len(apre) + 1:]
            if "/" in key:
                return self.md_send(404, "Not Found\n")

            def value():
                items = inst.metadata_items()
                if not key:
                    if self.query.get("recursive") == "true":
                        return json.dumps(items)
                    return "".join(k + "\n" for k in sorted(items))
                return items.get(key)
            return self.md_wait(value)
        fixed = {"/computeMetadata/v1/instance/name": lambda: inst.name,
                 "/computeMetadata/v1/instance/id": lambda: inst.res["id"],
                 "/computeMetadata/v1/instance/hostname":
                     lambda: "%s.%s.c.%s.internal" % (inst.name, A.zone, A.project),
                 "/computeMetadata/v1/instance/zone":
                     lambda: "projects/%s/zones/%s" % (project_number(), A.zone),
                 "/computeMetadata/v1/instance/machine-type":
                     lambda: "projects/%s/machineTypes/%s" % (
                         project_number(), inst.res["machineType"].rsplit("/", 1)[1]),
                 "/computeMetadata/v1/instance/scheduling/preemptible":
                     lambda: "TRUE" if inst.sched.get("preemptible") else "FALSE",
                 "/computeMetadata/v1/instance/preempted":
                     lambda: "TRUE" if inst.preempted else "FALSE",
                 "/computeMetadata/v1/project/project-id": lambda: A.project,
                 "/computeMetadata/v1/project/numeric-project-id": project_number,
                 "/computeMetadata/v1/instance/service-accounts/default/email":
                     lambda: A.client_email,
                 "/computeMetadata/v1/instance/service-accounts/default/scopes":
                     lambda: "".join(x + "\n" for x in instance_scopes(inst)),
                 "/computeMetadata/v1/instance/service-accounts/":
                     lambda: "default/\n%s/\n" % A.client_email}
        if p == "/computeMetadata/v1/instance/service-accounts/default/token":
            return self.md_send(200, json.dumps({
                "access_token": issue_token(inst.name), "expires_in": A.token_lifetime - 1,
                "token_type": "Bearer"}), "application/json")
        if p in fixed:
            return self.md_wait(lambda: str(fixed[p]()))
        return self.md_send(404, "Not Found\n")

    def md_send(self, code, text, ctype="application/text", etag=None):
        hdrs = [("Metadata-Flavor", "Google")]
        if etag:
            hdrs.append(("ETag", etag))
        self.send(code, text, ctype, headers=hdrs)

    def md_wait(self, value):
        def etag():
            v = value()
            return hashlib.sha256(b"\0" if v is None else b"v" + v.encode()).hexdigest()[:16]
        if self.query.get("wait_for_change") == "true":
            last = self.query.get("last_etag", "0")
            try:
                tmo = float(self.query.get("timeout_sec", "60"))
            except ValueError:
                tmo = 60
            with L:
                CHANGED.wait_for(lambda: etag() != last or STOPPING.is_set()
                                 or self.instance.deleting, max(0, min(tmo, 3600)))
        with L:
            v, e = value(), etag()
        if v is None:
            return self.md_send(404, "Not Found\n", etag=e)
        self.md_send(200, v, etag=e)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class MetadataServer(Server):
    def __init__(self, inst):
        handler = type("MD_" + inst.name.replace("-", "_"), (MetadataHandler,),
                       {"instance": inst})
        super().__init__(("127.0.0.1", 0), handler)


def fake_state():
    with L:
        return {"instances": [{"name": i.name, "status": i.res["status"], "id": i.res["id"],
                               "qemu_pid": i.proc.pid if i.proc else None,
                               "metadata_port": i.md_port, "dir": i.dir,
                               "provisioningModel": i.sched.get("provisioningModel"),
                               "disks": [d["path"] for d in i.disks]}
                              for i in INSTANCES.values()],
                "images": [{"name": i["name"], "status": i["status"],
                            "diskSizeGb": i["diskSizeGb"]} for i in IMAGES.values()],
                "disks": [{"name": n, "path": d["path"], "users": d["res"]["users"]}
                          for n, d in DISKS.items()],
                "buckets": sorted(BUCKETS),
                "objects": ["%s/%s" % (b, m["name"]) for b in sorted(BUCKETS)
                            for m in list_objects(b)],
                "object_sizes": {"%s/%s" % (b, m["name"]): int(m["size"])
                                 for b in sorted(BUCKETS) for m in list_objects(b)},
                "operations": len(OPS), "live_tokens": sum(
                    1 for t in TOKENS.values() if t["exp"] > time.time()),
                "quota": dict(QUOTA), "outage_until": OUTAGE["until"],
                "deleted_by_instance": list(SELF_DELETED),
                "port": int(BASE.rsplit(":", 1)[1])}


# ---- relay (the guestfwd command) -------------------------------------------

def relay(port):
    """stdin/stdout (slirp's socket to the guest connection) <-> 127.0.0.1:PORT.
    Quiet: stderr goes to the guest too. Ends when QEMU goes away."""
    ppid = os.getppid()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError:
        return 1
    s.setblocking(True)
    up_open, down_open = True, True
    while up_open or down_open:
        fds = ([0] if up_open else []) + ([s] if down_open else [])
        r, _, _ = select.select(fds, [], [], 1.0)
        if os.getppid() != ppid:
            break
        if 0 in r:
            try:
                d = os.read(0, 65536)
            except OSError:
                d = b""
            if d:
                s.sendall(d)
            else:
                up_open = False
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        if s in r:
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if d:
                try:
                    while d:
                        d = d[os.write(1, d):]
                except OSError:
                    break
            else:
                down_open = False
                try:
                    socket.socket(fileno=os.dup(1)).shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                break
    return 0


# ---- main -------------------------------------------------------------------

def main():
    global A, BASE
    if len(sys.argv) == 3 and sys.argv[1] == "--relay":
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        try:
            sys.exit(relay(int(sys.argv[2])))
        except Exception:
            sys.exit(1)
    ap = argparse.ArgumentParser(description="a fake Google Compute Engine for tests")
    ap.add_argument("--state", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--zone", required=True)
    ap.add_argument("--client-email", required=True)
    ap.add_argument("--rsa-n", required=True, help="modulus, hex")
    ap.add_argument("--rsa-e", required=True, type=int)
    ap.add_argument("--token-lifetime", type=int, default=3600)
    ap.add_argument("--bucket", action="append", default=[])
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--qemu-img", default="qemu-img")
    ap.add_argument("--ovmf-code", default="/usr/share/OVMF/OVMF_CODE_4M.fd")
    ap.add_argument("--ovmf-vars", default="/usr/share/OVMF/OVMF_VARS_4M.fd")
    ap.add_argument("--instance-storage-host", default=MD_ADDR)
    A = ap.parse_args()
    A.rsa_n = int(A.rsa_n.strip().removeprefix("Modulus=").removeprefix("0x"), 16)
    A.state = os.path.abspath(A.state)
    if A.token_lifetime < 2:
        ap.error("--token-lifetime must be at least 2")
    if ipaddress.ip_address(A.instance_storage_host) not in SLIRP_NET or \
            A.instance_storage_host.endswith((".0", ".1", ".2", ".3", ".255")):
        ap.error("--instance-storage-host must be a free address in %s" % SLIRP_NET)
    for d in ("images", "instances", "disks", "storage"):
        os.makedirs(os.path.join(A.state, d), exist_ok=True)
    shutil.rmtree(os.path.join(A.state, "storage", ".tmp"), ignore_errors=True)
    for b in os.listdir(os.path.join(A.state, "storage")) + A.bucket:
        if not b.startswith("."):
            try:
                make_bucket(b)
            except ApiError as e:
                ap.error(e.message)

    srv = Server(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    BASE = "http://127.0.0.1:%d" % port
    stop = threading.Event()

    def on_signal(_sig, _frame):
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = A.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, A.port_file)
    log("listening on %s (project %s, zone %s)" % (BASE, A.project, A.zone))
    while not stop.wait(3600):
        pass
    with L:
        STOPPING.set()
        CHANGED.notify_all()
        insts = list(INSTANCES.values())
    for i in insts:
        i.kill()
    srv.shutdown()
    log("stopped; %d instance(s) killed" % len(insts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
