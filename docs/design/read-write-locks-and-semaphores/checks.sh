#!/bin/bash
# The hand checks of lua-checks.md: run against a throwaway redis-server (PORT), with a
# `redis-cli psubscribe 'd29:*'` writing to $SUBLOG. Output is the transcript.
set -u
source "$(dirname "$0")/lua-env.sh"
SUBLOG=${SUBLOG:-/tmp/d29-sub.log}
seen=$(wc -l < "$SUBLOG")
msgs() { sleep 0.1; local now; now=$(wc -l < "$SUBLOG");
  tail -n +$((seen + 1)) "$SUBLOG" | paste - - - - | awk -F'\t' '$1=="pmessage"{print "  pub/sub " $3 " <- " $4}'; seen=$now; }
h() { echo; echo "### $*"; }
$R del d29:fencing >/dev/null; $R set d29:fencing 100 >/dev/null   # a counter with history

h "1. Several readers at once, from three clients; a reader's token"
acquire rw report A:1 r 0 a1 4000 30000
acquire rw report B:1 r 0 b1 4000 30000
acquire rw report C:1 r 0 c1 4000 30000
token rw report B:1 r b1
state rw report

h "2. A writer is excluded while readers hold (tryLock: not queued)"
acquire rw report W:1 w 0 w1 0 30000

h "3. A waiting writer blocks new readers; a reader's re-entry still passes (else it would deadlock)"
acquire rw report W:1 w 0 w1 4000 30000
acquire rw report E:1 r 0 e1 4000 30000
acquire rw report A:1 r 1 a1 0 30000
state rw report

h "4. An upgrade (reader asks for the write lock) is refused at once"
acquire rw report B:1 w 0 b2 4000 30000

h "5. Readers leave; the last one hands the lock to the writer (its client is told), the reader behind stays queued"
release rw report A:1 r 2 a1
release rw report A:1 r 1 a1
release rw report B:1 r 1 b1
msgs
release rw report C:1 r 1 c1
msgs
state rw report
echo "  (W:1's client takes the hand-off up with its own lease: held=0, its attempt w1)"
acquire rw report W:1 w 0 w1 4000 30000
token rw report W:1 w w1

h "6. The writer releases: every reader up to the next writer is granted at once"
acquire rw report F:1 r 0 f1 4000 30000
acquire rw report W:2 w 0 w2 4000 30000
acquire rw report G:1 r 0 g1 4000 30000
state rw report
release rw report W:1 w 1 w1
msgs
state rw report

h "7. Write tokens grow: the next writer's token is above the previous writer's and the readers'"
token rw report E:1 r e1
release rw report E:1 r 1 e1
release rw report F:1 r 1 f1
msgs
acquire rw report W:2 w 0 w2 4000 30000
token rw report W:2 w w2
state rw report

h "8. Downgrade: the writer takes the read lock; a waiting writer stays behind its read hold"
acquire rw report W:2 r 0 w2r 0 30000
acquire rw report W:3 w 0 w3 4000 30000
release rw report W:2 w 1 w2
msgs
state rw report
release rw report W:2 r 1 w2r
msgs
acquire rw report W:3 w 0 w3 4000 30000
release rw report G:1 r 1 g1
msgs
acquire rw report W:3 w 0 w3 4000 30000
release rw report W:3 w 1 w3
msgs
state rw report

h "9. A reader's share expires with its own lease while another reader renews (Redisson #1458, PR #7098)"
acquire rw cache A:2 r 0 a2 4000 1500
acquire rw cache B:2 r 0 b2 4000 30000
acquire rw cache W:4 w 0 w4 4000 30000
sleep 1
renew 30000 r "d29:rw:{cache}" B:2
sleep 0.7
echo "  (1.7 s later: A:2's lease of 1.5 s has run out, B:2 was renewed)"
renew 30000 rr "d29:rw:{cache}" A:2 "d29:rw:{cache}" B:2
state rw cache
acquire rw cache W:4 w 0 w4 4000 30000
state rw cache
release rw cache A:2 r 1 a2
release rw cache B:2 r 1 b2
msgs
acquire rw cache W:4 w 0 w4 4000 30000

h "10. A writer that gives up waiting lets the readers queued behind it in (.NET corefx #3364)"
acquire rw cfg R:1 r 0 r1 4000 30000
acquire rw cfg W:5 w 0 w5 4000 30000
acquire rw cfg R:2 r 0 r2 4000 30000
acquire rw cfg R:3 r 0 r3 4000 30000
state rw cfg
release rw cfg W:5 w 0 w5 leave
msgs
state rw cfg

h "11. A writer whose waiter vanished (place lapsed, no leave) no longer blocks readers"
acquire rw cfg2 R:4 r 0 r4 4000 30000
acquire rw cfg2 W:6 w 0 w6 300 30000
acquire rw cfg2 R:5 r 0 r5 4000 30000
sleep 0.4
acquire rw cfg2 R:5 r 0 r5 4000 30000
state rw cfg2

h "12. A release re-sent after a reconnect; a release of a hold that is gone"
release rw cfg R:1 r 1 r1
release rw cfg R:1 r 1 r1
release rw cfg NOBODY:1 r 1 x1
msgs

h "13. Semaphore: at most 3 permits; the 4th waits"
acquire sem pay P:1 p 0 p1 4000 30000 3
acquire sem pay P:2 p 0 p2 4000 30000 3
acquire sem pay P:3 p 0 p3 4000 1500 3
acquire sem pay P:4 p 0 p4 4000 30000 3
query sem pay available 3
state sem pay

h "14. Semaphore: an instance that declares other permits is refused, nothing changes"
acquire sem pay X:1 p 0 x1 4000 30000 5
query sem pay available 5

h "15. Semaphore: re-entry takes no second permit"
acquire sem pay P:1 p 1 p1 0 30000 3
query sem pay available 3

h "16. Semaphore: a crashed holder's permit comes back after its lease (P:3 had 1.5 s) and goes to the queue"
sleep 1.6
query sem pay available 3
acquire sem pay P:4 p 0 p4 4000 30000 3
state sem pay

h "17. Semaphore: a release hands the permit to the next waiter; release without a permit"
acquire sem pay P:5 p 0 p5 4000 30000 3
release sem pay P:2 p 1 p2
msgs
release sem pay P:9 p 1 p9
state sem pay

h "18. Semaphore: once idle its state goes, and new permits are accepted"
release sem pay P:1 p 2 p1
release sem pay P:1 p 1 p1
release sem pay P:4 p 1 p4
release sem pay P:5 p 1 p5
msgs
$R exists "d29:sem:{pay}"
acquire sem pay X:1 p 0 x1 4000 30000 5
state sem pay

h "19. One renewal batch for an exclusive hold and shared holds; a stale one answers 0"
$R hset "d29:{job}" J:1 1 >/dev/null; $R pexpire "d29:{job}" 2000 >/dev/null
acquire rw stats S:1 r 0 s1 0 30000
acquire sem pay X:2 p 0 x2 0 30000 5
renew 30000 xrpw "d29:{job}" J:1 "d29:rw:{stats}" S:1 "d29:sem:{pay}" X:2 "d29:rw:{stats}" NOBODY:1
echo "  pttl d29:{job}: $($R pttl 'd29:{job}')"

h "20. A writer handed the lock gives up before taking it up (leave): the hold is handed on to the readers behind"
acquire rw doc D:1 r 0 d1 4000 30000
acquire rw doc W:7 w 0 w7 4000 30000
acquire rw doc D:2 r 0 d2 4000 30000
release rw doc D:1 r 1 d1
msgs
release rw doc W:7 w 0 w7 leave
msgs
state rw doc

h "21. tryAcquire with no wait is refused without queueing; the idle semaphore's state goes"
acquire sem api Q:1 p 0 q1 0 30000 1
acquire sem api Q:2 p 0 q2 0 30000 1
release sem api Q:1 p 1 q1
msgs
$R exists "d29:sem:{api}"
