#!/usr/bin/env python3
"""A small adbd for fswb's end-to-end tests: the device side of the ADB
transport protocol over TCP, for the real adb server (adb connect
127.0.0.1:PORT). Commands really run on this host, as the "device's"
userland: SH -c CMD with PATH=BIN and HOME=/data, cwd /, in whatever mount
namespace this process runs in (tests/e2e/adb-lib.sh starts it in one of its
own, with a tmpfs on /data).

Protocol: 24-byte little-endian message headers (command, arg0, arg1,
data_length, data_crc32 = sum of bytes, magic = command ^ 0xffffffff),
version 0x01000001, one WRTE in flight per stream (the next one waits for
the peer's OKAY). Services: shell (v1 and, unless --no-shell-v2, the shell
protocol v2), exec, sync (STAT LIST SEND RECV QUIT STA2 LST2), root, unroot,
reboot, remount (refused). Anything else is refused with CLSE.

Authentication (--auth KEYFILE): AUTH TOKEN (20 random bytes); an AUTH
SIGNATURE is accepted when it verifies against a key in KEYFILE (adbkey.pub
format) as RSA PKCS#1 v1.5 with the token taken as a SHA-1 digest; a bad
one gets a new TOKEN; an AUTH RSAPUBLICKEY leaves the device unauthorized
(no answer) unless --auth-accept-new.

SIGUSR1 (or the reboot: service) "reboots": the connections are closed,
every process the device started (every process of this mount namespace
but this one, when it is not the host's) is killed, mounts under /data are
lazily unmounted and loop devices backed by files under /data detached,
nothing listens for --reboot-seconds, then it listens again. SIGTERM does
the same and exits.

Limits: a pty is never allocated (shell,v2,pty: runs like raw: no echo, no
job control); features advertised: shell_v2 (unless --no-shell-v2) and
stat_v2 only (no ls_v2, sendrecv_v2, abb, cmd); sync SEND writes to a temp
file beside the target and renames it on DONE (mode as sent, mtime from
DONE); --no-root: commands run as uid/gid 2000 with no supplementary
groups, sync runs with fsuid/fsgid 2000 (setfsuid on its thread). adbd.py
must be the first process of a mount namespace made for it (its parent in
another one) for the reboot's sweep, unmounts and loop detaches; otherwise
a reboot kills only the process groups it started.

Python 3 standard library only. The log never holds key material.
"""

import argparse
import base64
import ctypes
import errno
import fcntl
import os
import select
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from collections import deque

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_AUTH = 0x48545541
A_VERSION = 0x01000001
MAX_PAYLOAD = 256 * 1024
AUTH_TOKEN, AUTH_SIGNATURE, AUTH_RSAPUBLICKEY = 1, 2, 3
CMD_NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_OPEN: "OPEN", A_OKAY: "OKAY",
             A_CLSE: "CLSE", A_WRTE: "WRTE", A_AUTH: "AUTH"}

# DigestInfo of a SHA-1 digest (RFC 3447, 9.2)
SHA1_PREFIX = bytes.fromhex("3021300906052b0e03021a05000414")

SHELL_UID = 2000
LOG = None
LOG_LOCK = threading.Lock()


def log(msg):
    if LOG is None:
        return
    with LOG_LOCK:
        LOG.write("%s [%d] %s\n" % (time.strftime("%H:%M:%S"), os.getpid(), msg))
        LOG.flush()


def mkid(s):
    return struct.unpack("<I", s.encode())[0]


ID_STAT, ID_STA2, ID_LST2 = mkid("STAT"), mkid("STA2"), mkid("LST2")
ID_LIST, ID_SEND, ID_RECV = mkid("LIST"), mkid("SEND"), mkid("RECV")
ID_DENT, ID_DONE, ID_DATA = mkid("DENT"), mkid("DONE"), mkid("DATA")
ID_OKAY, ID_FAIL, ID_QUIT = mkid("OKAY"), mkid("FAIL"), mkid("QUIT")
SYNC_DATA_MAX = 64 * 1024


# ---- keys ---------------------------------------------------------------------

def load_keys(path):
    """The RSA public keys (n, e) of an adbkey.pub-format file: one key a
    line, base64 of the Android RSAPublicKey struct, then " user@host"."""
    keys = []
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                raw = base64.b64decode(line.split()[0])
            except Exception:
                continue
            if len(raw) < 8:
                continue
            words = struct.unpack_from("<I", raw, 0)[0]
            nbytes = words * 4
            if len(raw) < 8 + 2 * nbytes + 4:
                continue
            n = int.from_bytes(raw[8:8 + nbytes], "little")
            e = struct.unpack_from("<I", raw, 8 + 2 * nbytes)[0]
            keys.append((n, e))
    return keys


def verify(keys, token, sig):
    for n, e in keys:
        k = (n.bit_length() + 7) // 8
        if len(sig) != k:
            continue
        s = int.from_bytes(sig, "big")
        if s >= n:
            continue
        em = pow(s, e, n).to_bytes(k, "big")
        t = SHA1_PREFIX + token
        want = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
        if em == want:
            return True
    return False


# ---- per-thread filesystem identity ---------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def set_fs_ids(uid):
    """setfsuid/setfsgid act on the calling thread only (the syscalls)."""
    _libc.setfsgid(uid)
    _libc.setfsuid(uid)


# ---- the transport ----------------------------------------------------------------

class Closed(Exception):
    pass


class Stream:
    def __init__(self, t, lid, rid):
        self.t, self.lid, self.rid = t, lid, rid
        self.cv = threading.Condition()
        self.inq = deque()
        self.closed = False      # either side closed it
        self.can_send = True
        self.wlock = threading.Lock()
        self.on_close = None     # called once when the peer closes
        self.buf = b""

    # from the transport's reader thread
    def got_write(self, data):
        with self.cv:
            self.inq.append(data)
            self.cv.notify_all()

    def got_okay(self):
        with self.cv:
            self.can_send = True
            self.cv.notify_all()

    def got_close(self):
        with self.cv:
            already = self.closed
            self.closed = True
            self.cv.notify_all()
        if not already and self.on_close:
            try:
                self.on_close()
            except Exception as e:
                log("on_close: %r" % e)

    # from the service
    def read(self):
        """The next WRTE payload; b"" once the stream is closed."""
        with self.cv:
            while not self.inq and not self.closed:
                self.cv.wait()
            if not self.inq:
                return b""
            data = self.inq.popleft()
            closed = self.closed
        if not closed:
            self.t.send(A_OKAY, self.lid, self.rid)
        return data

    def read_exact(self, n):
        while len(self.buf) < n:
            d = self.read()
            if not d:
                raise Closed()
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def write(self, data):
        with self.wlock:
            mv = memoryview(data)
            while len(mv):
                chunk = bytes(mv[:self.t.maxdata])
                mv = mv[len(chunk):]
                with self.cv:
                    while not self.can_send and not self.closed:
                        self.cv.wait()
                    if self.closed:
                        raise Closed()
                    self.can_send = False
                self.t.send(A_WRTE, self.lid, self.rid, chunk)

    def close(self):
        with self.cv:
            already = self.closed
            self.closed = True
            self.cv.notify_all()
        self.t.forget(self.lid)
        if not already:
            self.t.send(A_CLSE, self.lid, self.rid)


class Transport:
    def __init__(self, dev, sock, peer):
        self.dev, self.sock, self.peer = dev, sock, peer
        self.wlock = threading.Lock()
        self.slock = threading.Lock()
        self.streams = {}
        self.next_id = 1
        self.maxdata = MAX_PAYLOAD
        self.online = False
        self.token = None
        self.dead = False

    def send(self, cmd, a0, a1, data=b""):
        hdr = struct.pack("<6I", cmd, a0, a1, len(data), sum(data) & 0xFFFFFFFF,
                          cmd ^ 0xFFFFFFFF)
        try:
            with self.wlock:
                self.sock.sendall(hdr + data if len(data) < 4096 else hdr)
                if len(data) >= 4096:
                    self.sock.sendall(data)
        except OSError:
            self.shutdown()

    def recv_exact(self, n):
        out = bytearray()
        while len(out) < n:
            d = self.sock.recv(n - len(out))
            if not d:
                raise Closed()
            out += d
        return bytes(out)

    def forget(self, lid):
        with self.slock:
            self.streams.pop(lid, None)

    def shutdown(self):
        if self.dead:
            return
        self.dead = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        with self.slock:
            streams = list(self.streams.values())
            self.streams.clear()
        for s in streams:
            s.got_close()

    def banner(self):
        d = self.dev.a
        return ("device::ro.product.name=%s;ro.product.model=%s;ro.product.device=%s;"
                "features=%s" % (d.product, d.model, d.device, ",".join(self.dev.features))).encode()

    def send_token(self):
        self.token = os.urandom(20)
        self.send(A_AUTH, AUTH_TOKEN, 0, self.token)

    def go_online(self):
        self.online = True
        log("%s: online" % self.peer)
        self.send(A_CNXN, A_VERSION, self.maxdata, self.banner())

    def run(self):
        try:
            while not self.dead:
                hdr = self.recv_exact(24)
                cmd, a0, a1, n, _crc, magic = struct.unpack("<6I", hdr)
                if magic != cmd ^ 0xFFFFFFFF:
                    log("%s: bad magic, dropping the connection" % self.peer)
                    break
                data = self.recv_exact(n) if n else b""
                self.handle(cmd, a0, a1, data)
        except (Closed, OSError) as e:
            log("%s: connection ends (%s)" % (self.peer, e.__class__.__name__))
        finally:
            self.shutdown()
            try:
                self.sock.close()
            except OSError:
                pass
            self.dev.transport_gone(self)

    def handle(self, cmd, a0, a1, data):
        if cmd == A_CNXN:
            log("%s: CNXN version %#x maxdata %d %r" % (self.peer, a0, a1, data[:200]))
            self.maxdata = max(4096, min(a1, MAX_PAYLOAD)) if a1 else MAX_PAYLOAD
            # a new CNXN resets the connection's streams
            with self.slock:
                streams = list(self.streams.values())
                self.streams.clear()
            for s in streams:
                s.got_close()
            self.online = False
            if self.dev.keys is None:
                self.go_online()
            else:
                self.send_token()
            return
        if cmd == A_AUTH:
            if self.dev.keys is None or self.online:
                return
            if a0 == AUTH_SIGNATURE:
                if self.token and verify(self.dev.keys, self.token, data):
                    log("%s: AUTH signature verified" % self.peer)
                    self.go_online()
                else:
                    log("%s: AUTH signature does not verify: new token" % self.peer)
                    self.send_token()
            elif a0 == AUTH_RSAPUBLICKEY:
                if self.dev.a.auth_accept_new:
                    try:
                        self.dev.keys += load_keys_from_bytes(data)
                    except Exception as e:
                        log("%s: bad public key: %r" % (self.peer, e))
                        return
                    log("%s: new public key accepted (--auth-accept-new)" % self.peer)
                    self.go_online()
                else:
                    log("%s: AUTH public key offered: the device stays unauthorized"
                        % self.peer)
            return
        if not self.online:
            log("%s: %s before the connection is online: ignored"
                % (self.peer, CMD_NAMES.get(cmd, hex(cmd))))
            return
        if cmd == A_OPEN:
            name = data.rstrip(b"\0").decode("utf-8", "replace")
            with self.slock:
                lid = self.next_id
                self.next_id += 1
            self.dev.open_service(self, lid, a0, name)
        elif cmd in (A_OKAY, A_WRTE, A_CLSE):
            with self.slock:
                s = self.streams.get(a1)
            if s is None or (s.rid != a0 and cmd != A_CLSE):
                if cmd == A_WRTE:
                    self.send(A_CLSE, 0, a0)
                return
            if cmd == A_OKAY:
                s.got_okay()
            elif cmd == A_WRTE:
                s.got_write(data)
            else:
                self.forget(a1)
                s.got_close()
        # A_SYNC and anything else: ignored


def load_keys_from_bytes(data):
    import tempfile
    with tempfile.NamedTemporaryFile() as f:
        f.write(data.rstrip(b"\0"))
        f.flush()
        return load_keys(f.name)


# ---- the device -----------------------------------------------------------------

class Device:
    def __init__(self, a):
        self.a = a
        self.keys = load_keys(a.auth) if a.auth else None
        self.features = (["shell_v2"] if a.shell_v2 else []) + ["stat_v2"]
        self.lock = threading.Lock()
        self.transports = set()
        self.pgids = set()
        self.procs = set()
        self.rebooting = False
        self.props = {
            "ro.product.name": a.product, "ro.product.model": a.model,
            "ro.product.device": a.device, "ro.serialno": a.serialno,
            "ro.debuggable": "1", "ro.secure": "0" if a.root else "1",
        }
        for kv in a.prop or []:
            k, _, v = kv.partition("=")
            self.props[k] = v

    # -- the device's userland
    def write_getprop(self):
        def q(s):
            return "'" + s.replace("'", "'\\''") + "'"
        lines = ["#!" + self.a.sh, "# made by adbd.py: this device's properties",
                 'if [ $# -eq 0 ]; then']
        for k in sorted(self.props):
            lines.append("\tprintf '%%s\\n' %s" % q("[%s]: [%s]" % (k, self.props[k])))
        lines.append("\texit 0\nfi\ncase $1 in")
        for k in sorted(self.props):
            lines.append("%s) printf '%%s\\n' %s ;;" % (q(k), q(self.props[k])))
        lines.append('*) if [ $# -ge 2 ]; then printf \'%s\\n\' "$2"; else echo; fi ;;')
        lines.append("esac")
        path = os.path.join(self.a.bin, "getprop")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(tmp, 0o755)
        os.rename(tmp, path)

    def uid(self):
        return 0 if self.a.root else SHELL_UID

    def spawn(self, argv, stdin, stdout, stderr):
        env = {"PATH": self.a.bin, "HOME": "/data"}
        kw = {}
        if not self.a.root:
            kw = dict(user=SHELL_UID, group=SHELL_UID, extra_groups=[])
        with self.lock:
            if self.rebooting:
                raise OSError(errno.EAGAIN, "the device is rebooting")
            p = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, env=env,
                                 cwd="/", start_new_session=True, close_fds=True, **kw)
            self.pgids.add(p.pid)
            self.procs.add(p)
        log("spawned pid %d: %r" % (p.pid, argv))
        return p

    def reaped(self, p):
        with self.lock:
            self.procs.discard(p)

    def shell_argv(self, cmd):
        return [self.a.sh, "-c", cmd] if cmd else [self.a.sh]

    # -- services
    def open_service(self, t, lid, rid, name):
        log("%s: OPEN %d %r" % (t.peer, rid, name))
        svc, _, arg = name.partition(":")
        fn = None
        if svc == "shell" or svc.startswith("shell,"):
            args = svc.split(",")[1:]
            if "v2" in args:
                if self.a.shell_v2:
                    fn = lambda s: self.svc_shell_v2(s, arg)
            else:
                fn = lambda s: self.svc_shell_v1(s, arg)
        elif svc == "exec":
            fn = lambda s: self.svc_exec(s, arg)
        elif svc == "sync" and arg == "":
            fn = self.svc_sync
        elif svc == "root" and arg == "":
            fn = lambda s: self.svc_text(s, "adbd is already running as root\n" if self.a.root
                                         else "adbd cannot run as root in production builds\n")
        elif svc == "unroot" and arg == "":
            fn = lambda s: self.svc_text(s, "adbd not running as root\n" if not self.a.root
                                         else "adbd cannot run as non-root in this test device\n")
        elif svc == "remount":
            fn = lambda s: self.svc_text(s, "remount is not supported by this test device\n")
        elif svc == "reboot":
            fn = self.svc_reboot
        if fn is None:
            log("%s: refused %r" % (t.peer, name))
            t.send(A_CLSE, 0, rid)
            return
        s = Stream(t, lid, rid)
        with t.slock:
            t.streams[lid] = s
        t.send(A_OKAY, lid, rid)

        def run():
            try:
                fn(s)
            except Closed:
                pass
            except Exception as e:
                log("service %r: %r" % (name, e))
            finally:
                s.close()
        threading.Thread(target=run, daemon=True).start()

    def svc_text(self, s, text):
        s.write(text.encode())

    def svc_reboot(self, s):
        s.write(b"")
        threading.Thread(target=lambda: (time.sleep(0.2), os.kill(os.getpid(), signal.SIGUSR1)),
                         daemon=True).start()

    def kill_group(self, p):
        def k():
            for sig, delay in ((signal.SIGHUP, 1.0), (signal.SIGKILL, 0)):
                try:
                    os.killpg(p.pid, sig)
                except OSError:
                    return
                if delay:
                    time.sleep(delay)
        threading.Thread(target=k, daemon=True).start()

    def pump_output(self, p, fds, s, packet):
        """Child's output to the stream until the child has exited and its
        pipes are quiet (EOF, or 1 s idle after the exit: a background
        process may keep them open)."""
        fds = list(fds)
        idle = 0
        while fds:
            r, _, _ = select.select(fds, [], [], 0.2)
            if not r:
                if p.poll() is not None:
                    idle += 1
                    if idle >= 5:
                        break
                continue
            idle = 0
            for fd in r:
                try:
                    d = os.read(fd, 65536)
                except OSError:
                    d = b""
                if not d:
                    fds.remove(fd)
                    continue
                s.write(packet(fd, d))

    def svc_shell_v1(self, s, cmd):
        self.run_child(s, self.shell_argv(cmd), merge=True)

    def svc_exec(self, s, cmd):
        self.run_child(s, self.shell_argv(cmd), merge=False)

    def run_child(self, s, argv, merge):
        p = self.spawn(argv, subprocess.PIPE, subprocess.PIPE,
                       subprocess.STDOUT if merge else subprocess.DEVNULL)
        s.on_close = lambda: self.kill_group(p)
        if s.closed:
            self.kill_group(p)

        def feed():
            try:
                while True:
                    d = s.read()
                    if not d:
                        break
                    p.stdin.write(d)
                    p.stdin.flush()
            except (OSError, ValueError):
                pass
        threading.Thread(target=feed, daemon=True).start()
        try:
            self.pump_output(p, [p.stdout.fileno()], s, lambda fd, d: d)
        finally:
            p.wait()
            self.reaped(p)
            for f in (p.stdin, p.stdout):
                try:
                    f.close()
                except OSError:
                    pass
        log("pid %d exits %d" % (p.pid, p.returncode))

    def svc_shell_v2(self, s, cmd):
        p = self.spawn(self.shell_argv(cmd), subprocess.PIPE, subprocess.PIPE, subprocess.PIPE)
        s.on_close = lambda: self.kill_group(p)
        if s.closed:
            self.kill_group(p)
        out_fd, err_fd = p.stdout.fileno(), p.stderr.fileno()

        def feed():
            try:
                while True:
                    hdr = s.read_exact(5)
                    pid, n = hdr[0], struct.unpack("<I", hdr[1:])[0]
                    data = s.read_exact(n) if n else b""
                    if pid == 0 and not p.stdin.closed:
                        try:
                            p.stdin.write(data)
                            p.stdin.flush()
                        except (OSError, ValueError):
                            pass
                    elif pid == 4:
                        try:
                            p.stdin.close()
                        except OSError:
                            pass
            except (Closed, OSError):
                pass
        threading.Thread(target=feed, daemon=True).start()

        def packet(fd, d):
            return struct.pack("<BI", 1 if fd == out_fd else 2, len(d)) + d
        try:
            self.pump_output(p, [out_fd, err_fd], s, packet)
            rc = p.wait()
        finally:
            p.wait()
            self.reaped(p)
            for f in (p.stdin, p.stdout, p.stderr):
                try:
                    f.close()
                except OSError:
                    pass
        code = rc if rc >= 0 else 128 - rc
        log("pid %d exits %d" % (p.pid, code))
        s.write(struct.pack("<BIB", 3, 1, code & 0xFF))

    # -- sync
    def svc_sync(self, s):
        if not self.a.root:
            set_fs_ids(SHELL_UID)

        def fail(msg):
            s.write(struct.pack("<II", ID_FAIL, len(msg.encode())) + msg.encode())

        while True:
            cid, n = struct.unpack("<II", s.read_exact(8))
            if cid == ID_QUIT:
                return
            if n > 1024:
                fail("path too long")
                return
            path = s.read_exact(n).decode("utf-8", "surrogateescape")
            if cid == ID_STAT:
                try:
                    st = os.lstat(path)
                    s.write(struct.pack("<4I", ID_STAT, st.st_mode & 0xFFFFFFFF,
                                        st.st_size & 0xFFFFFFFF, int(st.st_mtime) & 0xFFFFFFFF))
                except OSError:
                    s.write(struct.pack("<4I", ID_STAT, 0, 0, 0))
            elif cid in (ID_STA2, ID_LST2):
                try:
                    st = os.stat(path) if cid == ID_STA2 else os.lstat(path)
                    s.write(struct.pack("<IIQQIIIIQqqq", cid, 0, st.st_dev, st.st_ino, st.st_mode,
                                        st.st_nlink, st.st_uid, st.st_gid, st.st_size,
                                        int(st.st_atime), int(st.st_mtime), int(st.st_ctime)))
                except OSError as e:
                    s.write(struct.pack("<IIQQIIIIQqqq", cid, e.errno, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            elif cid == ID_LIST:
                out = bytearray()
                try:
                    names = [".", ".."] + os.listdir(path)
                except OSError:
                    names = []
                for name in names:
                    try:
                        st = os.lstat(os.path.join(path, name))
                    except OSError:
                        continue
                    b = name.encode("utf-8", "surrogateescape")
                    out += struct.pack("<5I", ID_DENT, st.st_mode & 0xFFFFFFFF,
                                       st.st_size & 0xFFFFFFFF, int(st.st_mtime) & 0xFFFFFFFF,
                                       len(b)) + b
                out += struct.pack("<5I", ID_DONE, 0, 0, 0, 0)
                s.write(bytes(out))
            elif cid == ID_SEND:
                if not self.sync_send(s, path, fail):
                    return
            elif cid == ID_RECV:
                if not self.sync_recv(s, path, fail):
                    return
            else:
                fail("unknown command %08x" % cid)
                return

    def sync_send(self, s, spec, fail):
        path, _, mode_s = spec.rpartition(",")
        try:
            mode = int(mode_s)
        except ValueError:
            path, mode = spec, 0o644
        if not path:
            path, mode = spec, 0o644

        def drain():
            while True:
                did, n = struct.unpack("<II", s.read_exact(8))
                if did != ID_DATA:
                    return
                s.read_exact(n)

        def mkdirs(d):
            try:
                os.makedirs(d, 0o775, exist_ok=True)
            except OSError as e:
                fail("secure_mkdirs failed: %s" % os.strerror(e.errno))
                return False
            return True

        if stat.S_ISLNK(mode):
            did, n = struct.unpack("<II", s.read_exact(8))
            target = s.read_exact(n).rstrip(b"\0") if did == ID_DATA else b""
            try:
                if not mkdirs(os.path.dirname(path) or "/"):
                    drain()
                    return False
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
                os.symlink(target, path)
            except OSError as e:
                fail("symlink failed: %s" % os.strerror(e.errno))
                drain()
                return False
            did, n = struct.unpack("<II", s.read_exact(8))
            s.write(struct.pack("<II", ID_OKAY, 0))
            return True

        d = os.path.dirname(path) or "/"
        tmp = os.path.join(d, ".%s.adbd-tmp.%d" % (os.path.basename(path), threading.get_ident()))
        fd = -1
        try:
            if not os.path.isdir(d) and not mkdirs(d):
                drain()
                return False
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode & 0o7777)
            os.fchmod(fd, mode & 0o7777)
        except OSError as e:
            fail("couldn't create file: %s" % os.strerror(e.errno))
            drain()
            return False
        try:
            while True:
                did, n = struct.unpack("<II", s.read_exact(8))
                if did == ID_DONE:
                    mtime = n
                    break
                if did != ID_DATA:
                    fail("invalid data message")
                    raise Closed()
                if n > SYNC_DATA_MAX:
                    fail("oversize data message")
                    raise Closed()
                data = s.read_exact(n)
                try:
                    mv = memoryview(data)
                    while len(mv):
                        w = os.write(fd, mv)
                        mv = mv[w:]
                except OSError as e:
                    log("sync: write %s: %s" % (path, os.strerror(e.errno)))
                    fail("write failed: %s" % os.strerror(e.errno))
                    drain()
                    os.close(fd)
                    fd = -1
                    os.unlink(tmp)
                    return False
            os.close(fd)
            fd = -1
            os.utime(tmp, (mtime, mtime))
            os.rename(tmp, path)
        except Closed:
            if fd >= 0:
                os.close(fd)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        except OSError as e:
            if fd >= 0:
                os.close(fd)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            fail("%s: %s" % (path, os.strerror(e.errno)))
            return False
        s.write(struct.pack("<II", ID_OKAY, 0))
        return True

    def sync_recv(self, s, path, fail):
        try:
            f = open(path, "rb")
        except OSError as e:
            fail("open failed: %s" % os.strerror(e.errno))
            return True
        with f:
            while True:
                try:
                    d = f.read(SYNC_DATA_MAX)
                except OSError as e:
                    fail("read failed: %s" % os.strerror(e.errno))
                    return True
                if not d:
                    break
                s.write(struct.pack("<II", ID_DATA, len(d)) + d)
        s.write(struct.pack("<II", ID_DONE, 0))
        return True

    # -- connections and reboots
    def transport_gone(self, t):
        with self.lock:
            self.transports.discard(t)

    def serve_connection(self, conn, peer):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t = Transport(self, conn, "%s:%d" % peer)
        with self.lock:
            self.transports.add(t)
        log("connection from %s" % t.peer)
        threading.Thread(target=t.run, daemon=True).start()

    def own_namespace(self):
        return self.ns_mine

    def check_namespace(self):
        """Whether this process runs in a mount namespace of its own: one
        its parent (the shell that ran unshare) or PID 1 is not in."""
        self.ns_mine = False
        try:
            me = os.readlink("/proc/self/ns/mnt")
        except OSError:
            return
        for pid in (os.getppid(), 1):
            try:
                self.ns_mine = os.readlink("/proc/%d/ns/mnt" % pid) != me
                return
            except OSError:
                continue

    def kill_everything(self):
        """Every process the device started: the process groups it made and,
        in a mount namespace of its own, every other process in it."""
        me = os.getpid()
        with self.lock:
            pgids = set(self.pgids)
            self.pgids.clear()
        for pg in pgids:
            try:
                os.killpg(pg, signal.SIGKILL)
            except OSError:
                pass
        if self.own_namespace():
            ns = os.readlink("/proc/self/ns/mnt")
            for _ in range(20):
                left = 0
                for e in os.listdir("/proc"):
                    if not e.isdigit() or int(e) == me:
                        continue
                    try:
                        if os.readlink("/proc/%s/ns/mnt" % e) != ns:
                            continue
                        # not our own threads' parent chain: only other processes
                        os.kill(int(e), signal.SIGKILL)
                        left += 1
                    except OSError:
                        pass
                if not left:
                    break
                time.sleep(0.05)
        with self.lock:
            procs = list(self.procs)
        for p in procs:
            try:
                p.wait(timeout=2)
            except Exception:
                pass

    def release_data(self):
        """What a reboot would undo under /data: mounts (lazily) and loop
        devices whose backing file is there. Only in a namespace of our own."""
        if not self.own_namespace():
            return
        mps = []
        try:
            with open("/proc/self/mountinfo") as f:
                for line in f:
                    mp = line.split()[4].replace("\\040", " ")
                    if mp.startswith("/data/"):
                        mps.append(mp)
        except OSError:
            pass
        for mp in sorted(set(mps), key=lambda m: -m.count("/")):
            if _libc.umount2(mp.encode(), 2) != 0:   # MNT_DETACH
                log("umount %s: %s" % (mp, os.strerror(ctypes.get_errno())))
            else:
                log("unmounted %s" % mp)
        try:
            loops = [e for e in os.listdir("/sys/block") if e.startswith("loop")]
        except OSError:
            loops = []
        for lo in loops:
            try:
                with open("/sys/block/%s/loop/backing_file" % lo) as f:
                    back = f.read().strip()
            except OSError:
                continue
            if not back.startswith("/data/"):
                continue
            try:
                fd = os.open("/dev/" + lo, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    fcntl.ioctl(fd, 0x4C01)   # LOOP_CLR_FD
                finally:
                    os.close(fd)
                log("detached /dev/%s (%s)" % (lo, back))
            except OSError as e:
                log("detach /dev/%s: %s" % (lo, e))

    def drop_all(self):
        with self.lock:
            ts = list(self.transports)
        for t in ts:
            t.shutdown()

    def reboot(self, final=False):
        log("%s" % ("stopping" if final else "rebooting"))
        with self.lock:
            self.rebooting = True
        if not final:
            try:
                with open("/dev/kmsg", "w") as k:
                    k.write("adbd-test: rebooting\n")
            except OSError:
                pass
        self.drop_all()
        self.kill_everything()
        self.release_data()
        with self.lock:
            self.rebooting = False


def listen(port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(8)
    return ls


def main():
    global LOG
    ap = argparse.ArgumentParser(description="a test adbd over TCP")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pidfile")
    ap.add_argument("--log")
    ap.add_argument("--serialno", default="fswb-test-device")
    ap.add_argument("--model", default="fswb_test")
    ap.add_argument("--product", default="fswb_test_product")
    ap.add_argument("--device", default="fswb_test_device")
    ap.add_argument("--prop", action="append", metavar="KEY=VALUE")
    ap.add_argument("--bin", required=True, help="the device's PATH (one directory)")
    ap.add_argument("--sh", help="the device's shell (default BIN/sh)")
    ap.add_argument("--no-shell-v2", dest="shell_v2", action="store_false")
    ap.add_argument("--auth", metavar="KEYFILE")
    ap.add_argument("--auth-accept-new", action="store_true")
    ap.add_argument("--root", dest="root", action="store_true", default=True)
    ap.add_argument("--no-root", dest="root", action="store_false")
    ap.add_argument("--reboot-seconds", type=float, default=3)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    a.sh = a.sh or os.path.join(a.bin, "sh")
    if a.log:
        LOG = open(a.log, "a", buffering=1)
    dev = Device(a)
    dev.check_namespace()
    dev.write_getprop()

    flags = {"reboot": False, "stop": False}
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)

    def on_signal(sig, _frame):
        flags["stop" if sig in (signal.SIGTERM, signal.SIGINT) else "reboot"] = True
        try:
            os.write(wfd, b"x")
        except OSError:
            pass
    signal.signal(signal.SIGUSR1, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)

    ls = listen(a.port)
    if a.pidfile:
        with open(a.pidfile + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(a.pidfile + ".tmp", a.pidfile)
    log("listening on 127.0.0.1:%d, features %s, auth %s, root %s, own mount namespace %s" % (
        a.port, ",".join(dev.features), "yes" if dev.keys is not None else "no", a.root,
        dev.ns_mine))
    while True:
        r, _, _ = select.select([ls, rfd], [], [], 1.0)
        if rfd in r:
            os.read(rfd, 64)
        if flags["stop"]:
            ls.close()
            dev.reboot(final=True)
            log("stopped")
            return 0
        if flags["reboot"]:
            flags["reboot"] = False
            ls.close()
            dev.reboot()
            end = time.time() + a.reboot_seconds
            while time.time() < end and not flags["stop"]:
                select.select([rfd], [], [], max(0.0, end - time.time()))
                try:
                    os.read(rfd, 64) if select.select([rfd], [], [], 0)[0] else None
                except OSError:
                    pass
            if flags["stop"]:
                dev.reboot(final=True)
                log("stopped")
                return 0
            flags["reboot"] = False
            for i in range(50):
                try:
                    ls = listen(a.port)
                    break
                except OSError as e:
                    log("listen again: %s" % e)
                    time.sleep(0.1)
            else:
                return 1
            log("back after the reboot: listening on 127.0.0.1:%d" % a.port)
            continue
        if ls in r:
            try:
                conn, peer = ls.accept()
            except OSError:
                continue
            dev.serve_connection(conn, peer)


if __name__ == "__main__":
    sys.exit(main())
