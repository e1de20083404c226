# weft launch: environment of the ranks, exit status of a failing rank,
# restarts, usage errors.
# Run by CTest as: bash launch.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

run launch -n 3 -- sh -c 'echo "rank $WEFT_RANK of $WEFT_SIZE secret ${#WEFT_SECRET}"'
expect_rc 0
expect_out_has "rank 0 of 3 secret 64"
expect_out_has "rank 1 of 3 secret 64"
expect_out_has "rank 2 of 3 secret 64"

run launch -n 4 --grace 0.5 -- sh -c 'test "$WEFT_RANK" = 3 && exit 7; sleep 20'
expect_rc 7
expect_err_has "weft: launch: rank 3 (pid "
expect_err_has ") exited with status 7; the other ranks were stopped"

run launch -n 2 -- sh -c 'kill -TERM $$'
expect_rc 143
expect_err_has "was killed by signal 15 (Terminated)"

run launch -n 2 -- /nonexistent/cmd
expect_rc 127
expect_err_has "cannot run '/nonexistent/cmd': No such file or directory"

# Without "--" the options end at CMD: its flags, even one launch has (-n),
# are CMD's (issue 29: they were read as launch's and refused).
run launch -n 2 sh -c 'echo "rank $WEFT_RANK of $WEFT_SIZE: $*"' sh -b 8 --json -n 5 --grace
expect_rc 0
expect_out_has "rank 0 of 2: -b 8 --json -n 5 --grace"
expect_out_has "rank 1 of 2: -b 8 --json -n 5 --grace"
# Options put after CMD: the error says where they go.
run launch sh -c true -n 2
expect_rc 2
expect_err_has "weft: missing -n N (the number of ranks); weft launch's options go before CMD, whose words follow it (weft launch -n N -- CMD ...)"
# An unknown flag before CMD is still launch's error.
run launch -n 2 --bogus true
expect_rc 2
expect_err_has "weft: unknown flag '--bogus'"

# --restart: a failing rank starts again in its place with WEFT_RESTART,
# the others go on; once the restarts are used, a failure stops the job.
run launch -n 3 --restart 2 -- sh -c 'echo "rank $WEFT_RANK restart ${WEFT_RESTART:-0}"; test "$WEFT_RANK" = 1 && test "${WEFT_RESTART:-0}" -lt 2 && exit 5; exit 0'
expect_rc 0
expect_out_has "rank 1 restart 0"
expect_out_has "rank 1 restart 1"
expect_out_has "rank 1 restart 2"
expect_out_has "rank 0 restart 0"
expect_err_has "weft launch: rank 1 (pid "
expect_err_has ") exited with status 5; restart 1 of 2"
expect_err_has ") exited with status 5; restart 2 of 2"
run launch -n 2 --restart 1 --grace 0.5 -- sh -c 'test "$WEFT_RANK" = 0 && exit 0; kill -KILL $$'
expect_rc 137
expect_err_has "was killed by signal 9 (Killed); restart 1 of 1"
expect_err_has "weft: launch: rank 1 (pid "
expect_err_has ") was killed by signal 9 (Killed); the other ranks were stopped"
run launch -n 2 --restart x true
expect_rc 2
expect_err_has "weft: bad --restart 'x': expected 0 .. 1000000"

run launch -- true
expect_rc 2
expect_err_has "weft: missing -n N (the number of ranks)"
run launch -n 5000 true
expect_rc 2
expect_err_has "weft: bad -n '5000': expected 1 .. 4096"
run launch -n 2
expect_rc 2
run launch -n 2 --grace -1 true
expect_rc 2
expect_err_has "bad --grace '-1'"

finish
