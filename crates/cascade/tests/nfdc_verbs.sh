#!/bin/sh
# Every nfdc (NFD 24.07) verb against a running forwarder, checking each output and exit status
# as nfdc's manual pages give them. NFDC is the command that plays nfdc (`cascade ctl`, or an
# `nfdc` symlink to cascade); NDN_CLIENT_TRANSPORT names the forwarder; P1 and P2 are two UDP
# ports nothing listens on. Prints one line per failed check and exits 1 if any failed.
set -u
: "${NFDC:?}" "${P1:?}" "${P2:?}"
fail=0
R1="udp4://127.0.0.1:$P1"
R2="udp4://127.0.0.1:$P2"

# expect STATUS REGEX ARGS...: `$NFDC ARGS...` exits STATUS and its stdout and stderr hold a line
# matching the extended REGEX.
expect() {
    want=$1
    pattern=$2
    shift 2
    out=$($NFDC "$@" 2>&1)
    got=$?
    if [ "$got" != "$want" ]; then
        echo "FAIL: nfdc $*: exit $got, expected $want: $out"
        fail=1
    elif ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
        echo "FAIL: nfdc $*: no line matches /$pattern/: $out"
        fail=1
    fi
}

# Help and version need no forwarder.
expect 0 '^All subcommands:$'
expect 0 '^  route add       add a route$' help
expect 0 '^Subcommands starting with face:$' face help
expect 0 '^[0-9]+\.[0-9]+\.[0-9]+$' -V
expect 0 '^[0-9]+\.[0-9]+\.[0-9]+$' --version
expect 0 '^All subcommands:$' -h
expect 0 '^All subcommands:$' --help
expect 0 '^  nfdc route show \[prefix\] PREFIX$' help route
expect 0 '^  nfdc face \[list ' face --help
expect 0 '^  nfdc strategy set \[prefix\] PREFIX \[strategy\] STRATEGY$' strategy -h
expect 2 '^No such command: bogus $' help bogus

# status, channel
expect 0 '^General NFD status:$' status
expect 0 '^ +nUnsatisfiedInterests=[0-9]+$' status show
expect 0 '^ +startTime=[0-9]{8}T[0-9]{6}' status show
expect 0 '^Strategy choices:$' status report
expect 0 '^Channels:$' status report text
expect 0 '^  unix://' channel list
expect 0 '^  unix://' channel

# face
expect 0 '^faceid=[0-9]+ remote=fd://[0-9]+ local=unix://.* flags=\{local on-demand point-to-point congestion-marking\}$' face list
expect 0 'flags=\{local on-demand' face list scheme unix
expect 0 '^face-created id=[0-9]+ local=udp4://127\.0\.0\.1:[0-9]+ remote='"$R1"' persistency=persistent reliability=off congestion-marking=on .*mtu=1400$' \
    face create "$R1" congestion-marking on mtu 1400
ID=$($NFDC face list remote "$R1" | sed -n 's/^faceid=\([0-9]*\) .*/\1/p')
[ -n "$ID" ] || { echo "FAIL: face list remote $R1 found no face"; exit 1; }
expect 0 "^face-exists id=$ID .*remote=$R1 persistency=persistent " face create "$R1"
expect 0 "^face-updated id=$ID .*remote=$R1 persistency=permanent " face create "$R1" permanent
expect 0 "^face-updated id=$ID .* mtu=1300\$" face create remote "$R1" mtu 1300
expect 0 "^    faceid=$ID\$" face show "$ID"
expect 0 "^     flags=\{non-local permanent point-to-point congestion-marking\}\$" face show id "$ID"
expect 0 "^faceid=$ID remote=$R1 " face list "$R1"
expect 3 '^Face not found$' face show 999999
expect 3 '^Face not found$' face list remote udp4://127.0.0.1:1
expect 4 "^Error during canonization of remote FaceUri 'udp4://127\.0\.0\.1:99999': " face create udp4://127.0.0.1:99999

# route, fib
expect 0 "^route-add-accepted prefix=/nfdc/a nexthop=$ID origin=static cost=10 flags=child-inherit expires=never\$" \
    route add /nfdc/a "$ID" cost 10
expect 0 "^route-add-accepted prefix=/nfdc/b nexthop=$ID origin=nlsr cost=0 flags=capture expires=60000ms\$" \
    route add prefix /nfdc/b nexthop "$R1" origin nlsr no-inherit capture expires 60000
expect 0 "^face-created id=[0-9]+ .*remote=$R2 persistency=persistent " route add /nfdc/c "$R2"
expect 0 "^route-add-accepted prefix=/nfdc/c nexthop=[0-9]+ origin=static " route add /nfdc/c "$R2" origin 255
expect 0 "^prefix=/nfdc/a nexthop=$ID origin=static cost=10 flags=child-inherit expires=never\$" route list
expect 0 "^prefix=/nfdc/b nexthop=$ID origin=nlsr cost=0 flags=capture expires=[0-9]+s\$" route list origin nlsr
expect 0 "^prefix=/nfdc/a nexthop=$ID " route list nexthop "$R1"
expect 0 "^prefix=/nfdc/a nexthop=$ID " route show /nfdc/a
expect 0 "^prefix=/nfdc/a " route
expect 0 "^  /nfdc/a nexthops=\{faceid=$ID \(cost=10\)\}\$" fib list
expect 0 '^FIB:$' fib
expect 0 "^route-removed prefix=/nfdc/a nexthop=$ID origin=static\$" route remove /nfdc/a "$R1"
expect 0 "^route-removed prefix=/nfdc/b nexthop=$ID origin=nlsr\$" route remove prefix /nfdc/b nexthop "$ID" origin nlsr
expect 6 '^Route not found$' route show /nfdc/a
expect 6 '^Route not found$' route list origin 77
expect 3 '^Face not found$' route add /nfdc/d 999999
expect 3 '^Face not found$' route remove /nfdc/d 999999
expect 2 '^nexthop: required argument is missing$' route add /nfdc/x
expect 2 "^cost: cannot parse '-1' as uint \(value '-1' is negative\)\$" route add /nfdc/x 1 cost -1
expect 2 "^cannot parse '2' as an argument name\$" route add /nfdc/x 1 2
expect 2 '^No such command: route frob$' route frob

# strategy
expect 0 '^strategy-set prefix=/nfdc strategy=/localhost/nfd/strategy/multicast' \
    strategy set /nfdc /localhost/nfd/strategy/multicast
expect 0 '^prefix=/nfdc strategy=/localhost/nfd/strategy/multicast' strategy list
expect 0 '^prefix=/ strategy=' strategy
expect 0 '^  prefix=/nfdc$' strategy show /nfdc/x/y
expect 0 '^strategy=/localhost/nfd/strategy/multicast' strategy show prefix /nfdc
expect 0 '^strategy-unset prefix=/nfdc$' strategy unset /nfdc
expect 0 '^  prefix=/$' strategy show /nfdc/x/y
expect 7 '^Unknown strategy: /localhost/nfd/strategy/none$' strategy set /nfdc /localhost/nfd/strategy/none
expect 2 '^Unsetting default strategy is prohibited$' strategy unset /

# cs
expect 0 '^CS information:$' cs info
expect 0 '^   nMisses=[0-9]+$' cs
expect 0 '^cs-config-updated capacity=1000 admit=(on|off) serve=(on|off)$' cs config capacity 1000
expect 0 '^  capacity=1000$' cs info
expect 0 '^cs-erased prefix=/nfdc count=0$' cs erase /nfdc
expect 0 '^cs-erased prefix=/nfdc count=0$' cs erase /nfdc count 5
expect 2 "^admit: cannot parse 'maybe' as bool" cs config admit maybe

# batch mode: one command a line, checked before any runs, stopping at the first failure
B=$(mktemp)
printf '%s\n' '# a batch' "route add /nfdc/batch $ID cost 4 \\" '  no-inherit' '' \
    'route show /nfdc/batch' > "$B"
expect 0 "^prefix=/nfdc/batch nexthop=$ID origin=static cost=4 flags=none expires=never\$" -f "$B"
printf 'route remove /nfdc/batch %s\nroute show /nfdc/batch\n' "$ID" > "$B"
expect 6 "^route-removed prefix=/nfdc/batch nexthop=$ID origin=static\$" --batch "$B"
expect 6 "^  >> Failed to execute command on line 2 of the batch file $B\$" -f "$B"
printf 'status\nroute frob\n' > "$B"
expect 2 "^  >> Syntax error on line 2 of the batch in $B\$" -f "$B"
rm -f "$B"
out=$(printf 'strategy show /nfdc\n' | $NFDC -f - 2>&1)
if [ $? != 0 ] || ! printf '%s\n' "$out" | grep -q '^  prefix=/$'; then
    echo "FAIL: nfdc -f - (stdin): $out"
    fail=1
fi
expect 2 '^ERROR: Invalid command line arguments: -f should follow with batch-file' -f

# face destroy, last
expect 0 "^face-destroyed id=$ID local=udp4://127\.0\.0\.1:[0-9]+ remote=$R1 persistency=permanent reliability=(on|off) congestion-marking=(on|off)" \
    face destroy "$R1"
expect 3 '^Face not found$' face destroy "$ID"
expect 0 "^face-destroyed id=[0-9]+ .*remote=$R2 " face destroy "$R2"
exit $fail
