# Sourced by the hand checks in lua-checks.md: builds the prototype scripts as LockScripts would
# (fencing.lua from the project, then shared-common.lua, then the script) and defines short helpers.
D="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FENCING="$D/../../../lock-core/src/main/resources/io/distlock/redis/fencing.lua"
mkdir -p "$D/build"
PORT=${PORT:?set PORT}
R="redis-cli -p $PORT"
for s in acquire release renew token query; do
  cat "$FENCING" "$D/shared-common.lua" "$D/$s-shared.lua" > "$D/build/$s.lua"
  eval "SHA_$s=$($R script load "$(cat "$D/build/$s.lua")")"
done
PLACE=4000; GRANTS='d29:grants:'
# rw <name> -> the keys of a read-write lock; sem <name> -> of a semaphore
keys_rw()  { echo "d29:rw:{$1} d29:fencing d29:rw:{$1}:queue d29:rw:{$1}:queued"; }
keys_sem() { echo "d29:sem:{$1} d29:fencing d29:sem:{$1}:queue d29:sem:{$1}:queued"; }
# acquire <space> <name> <owner> <kind> <held> <attempt> <queueFor> <lease> [permits]
acquire() { local k; k=$(keys_$1 "$2"); echo "> acquire $4 $3 held=$5 attempt=$6 queue=$7 lease=$8 ${9:+permits=$9}";
  $R evalsha $SHA_acquire 4 $k "$3" "$8" "$5" "$6" "$7" "$4" "${9:-0}" $PLACE $GRANTS 0; }
# release <space> <name> <owner> <kind> <held> <attempt> [mode]
release() { local k; k=$(keys_$1 "$2"); echo "> release $4 $3 held=$5 attempt=$6 mode=${7:-}";
  $R evalsha $SHA_release 5 $k "$(echo $k | cut -d' ' -f1):released:$3" "$3" "$5" "${7:-}" "$6" $PLACE $GRANTS 0 "$4"; }
# renew <lease> <kinds> <key owner>...
renew() { local lease=$1 kinds=$2; shift 2; local keys=() owners=();
  while [ $# -gt 0 ]; do keys+=("$1"); owners+=("$2"); shift 2; done
  echo "> renew lease=$lease kinds=$kinds ${owners[*]}"
  $R evalsha $SHA_renew ${#keys[@]} "${keys[@]}" "$lease" "$kinds" "${owners[@]}"; }
# token <space> <name> <owner> <kind> <attempt>
token() { local k; k=$(keys_$1 "$2"); echo "> token $4 $3"; $R evalsha $SHA_token 2 $(echo $k | cut -d' ' -f1,2) "$3" "$5" 0 "$4"; }
query() { local h; h=$(keys_$1 "$2" | cut -d' ' -f1); shift 2; echo "> query $*"; $R evalsha $SHA_query 1 "$h" "$@"; }
state() { local k; k=$(keys_$1 "$2"); set -- $k; echo "  state $1:"; $R hgetall "$1" | paste - - | sed 's/^/    /';
  echo "  pttl $($R pttl "$1")  queue: $($R lrange "$3" 0 -1 | tr '\n' ' ')"; }
