#!/usr/bin/env python3
"""Concurrency check of the prototype scripts (issue #29), no dependencies: a tiny RESP client.

Threads play owners of different clients. Each acquires with a queue place and, while refused, asks
again every few ms with the same attempt id (as the engine's head waiter does when a hand-off message
is not listened for: the call takes the hand-off up). Gauges count who is inside; a checker thread
evaluates the state's invariants on the server all along.

usage: stress.py <port> <build dir> [seconds]
"""
import random
import socket
import sys
import threading
import time

PORT = int(sys.argv[1])
BUILD = sys.argv[2]
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 6.0


class Redis:
    def __init__(self):
        self.sock = socket.create_connection(("127.0.0.1", PORT))
        self.file = self.sock.makefile("rb")

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)[:-2]
            return data.decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise RuntimeError("bad reply " + repr(line))


def load(r, name):
    with open(f"{BUILD}/{name}.lua") as f:
        return r.call("SCRIPT", "LOAD", f.read())


setup = Redis()
SHA = {n: load(setup, n) for n in ("acquire", "release")}
CHECK = setup.call("SCRIPT", "LOAD", """
local h = KEYS[1]
local all = redis.call('hgetall', h)
local r, w, p, writer = 0, 0, 0, redis.call('hget', h, ':writer')
local readers = {}
for i = 1, #all, 2 do
  local k = string.sub(all[i], 1, 2)
  if k == 'r:' then r = r + 1; readers[string.sub(all[i], 3)] = true
  elseif k == 'w:' then w = w + 1
  elseif k == 'p:' then p = p + 1 end
end
if w > 1 then return 'two writers' end
if writer and r > 0 and not (r == 1 and readers[writer]) then return 'writer with other readers' end
if tonumber(redis.call('hget', h, ':readers') or '0') ~= r then return 'reader count' end
if tonumber(redis.call('hget', h, ':holders') or '0') ~= p then return 'holder count' end
local permits = tonumber(redis.call('hget', h, ':permits') or '0')
if p > 0 and p > permits then return 'more holders than permits' end
return 'ok'
""")

GRANTS = "d29s:grants:"
lock = threading.Lock()
stats = {"readers": 0, "writers": 0, "max_readers": 0, "permits": 0, "max_permits": 0, "violations": [],
         "ops": 0, "writer_waits": [], "reader_waits": [], "permit_waits": [], "checks": 0}
stop = time.time() + SECONDS


def keys(space, name):
    h = f"d29s:{space}:{{{name}}}"
    return [h, "d29s:fencing", h + ":queue", h + ":queued"]


def acquire(r, space, name, owner, kind, attempt, permits=0, lease=30000):
    k = keys(space, name)
    start = time.time()
    while True:
        reply = r.call("EVALSHA", SHA["acquire"], 4, *k, owner, lease, 0, attempt, 4000, kind, permits, 4000,
                       GRANTS, 0)
        if reply[0] == 1:
            return time.time() - start
        if reply[0] != 0:
            raise RuntimeError(f"{owner} {kind}: {reply}")
        time.sleep(random.uniform(0.002, 0.008))


def release(r, space, name, owner, kind, attempt):
    k = keys(space, name)
    reply = r.call("EVALSHA", SHA["release"], 5, *k, k[0] + ":released:" + owner, owner, 1, "", attempt, 4000,
                   GRANTS, 0, kind)
    if reply != 1:
        with lock:
            stats["violations"].append(f"release {owner} {kind} -> {reply}")


def rw_worker(client, writer):
    r = Redis()
    owner = f"c{client}:{'w' if writer else 'r'}"
    n = 0
    while time.time() < stop:
        n += 1
        attempt = f"{owner.replace(':', '-')}-{n}"
        kind = "w" if writer else "r"
        waited = acquire(r, "rw", "stress", owner, kind, attempt)
        with lock:
            stats["writer_waits" if writer else "reader_waits"].append(waited)
            if writer:
                stats["writers"] += 1
                if stats["writers"] > 1 or stats["readers"] > 0:
                    stats["violations"].append(f"writer inside with {stats['writers']} writers, {stats['readers']} readers")
            else:
                stats["readers"] += 1
                stats["max_readers"] = max(stats["max_readers"], stats["readers"])
                if stats["writers"] > 0:
                    stats["violations"].append("reader inside with a writer")
            stats["ops"] += 1
        time.sleep(random.uniform(0.001, 0.004) if not writer else 0.002)
        with lock:
            if writer:
                stats["writers"] -= 1
            else:
                stats["readers"] -= 1
        release(r, "rw", "stress", owner, kind, attempt)
        if writer:
            time.sleep(0.02)


def sem_worker(client):
    r = Redis()
    owner = f"s{client}:1"
    n = 0
    while time.time() < stop:
        n += 1
        attempt = f"s{client}-{n}"
        waited = acquire(r, "sem", "stress", owner, "p", attempt, permits=3)
        with lock:
            stats["permit_waits"].append(waited)
            stats["permits"] += 1
            stats["max_permits"] = max(stats["max_permits"], stats["permits"])
            if stats["permits"] > 3:
                stats["violations"].append(f"{stats['permits']} permit holders")
        time.sleep(random.uniform(0.001, 0.005))
        with lock:
            stats["permits"] -= 1
        release(r, "sem", "stress", owner, "p", attempt)


def checker():
    r = Redis()
    while time.time() < stop:
        for space in ("rw", "sem"):
            verdict = r.call("EVALSHA", CHECK, 1, keys(space, "stress")[0])
            with lock:
                stats["checks"] += 1
                if verdict != "ok":
                    stats["violations"].append(f"server state {space}: {verdict}")
        time.sleep(0.001)


setup.call("DEL", *keys("rw", "stress"), *keys("sem", "stress"))
threads = [threading.Thread(target=rw_worker, args=(c, False)) for c in range(12)]
threads += [threading.Thread(target=rw_worker, args=(c, True)) for c in range(2)]
threads += [threading.Thread(target=sem_worker, args=(c,)) for c in range(8)]
threads.append(threading.Thread(target=checker))
for t in threads:
    t.start()
for t in threads:
    t.join()


def p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else 0


print(f"{SECONDS:.0f} s; 12 readers + 2 writers on one read-write lock, 8 threads on a 3-permit semaphore")
print(f"acquisitions: {stats['ops']} rw, {len(stats['permit_waits'])} permits; server-side state checks: {stats['checks']}")
print(f"readers inside at once, at most: {stats['max_readers']}; permit holders at once, at most: {stats['max_permits']}")
print(f"writer waits: {len(stats['writer_waits'])} acquisitions, p50 {p(stats['writer_waits'], .5):.1f} ms, "
      f"p99 {p(stats['writer_waits'], .99):.1f} ms, max {p(stats['writer_waits'], 1):.1f} ms")
print(f"reader waits: p50 {p(stats['reader_waits'], .5):.1f} ms, p99 {p(stats['reader_waits'], .99):.1f} ms")
print(f"permit waits: p50 {p(stats['permit_waits'], .5):.1f} ms, p99 {p(stats['permit_waits'], .99):.1f} ms")
print(f"violations: {len(stats['violations'])} {stats['violations'][:5]}")
