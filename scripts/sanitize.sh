#!/usr/bin/env bash
# The runtime's tests under sanitizers.
# Usage: scripts/sanitize.sh [address|thread|all]   (default: address)
#   address  AddressSanitizer + UndefinedBehaviorSanitizer, build dir build-asan
#   thread   ThreadSanitizer, build dir build-tsan
# (set -e does not act inside sanitize(), which is called in a || list: every step is checked.)
# Configures the build dir, builds only what the runtime tests need, runs them with ctest,
# and fails when a test fails or a sanitizer wrote a report (reports go to files, so one
# from a rank of a test that expects a failure is not lost; they are printed at the end).
# Extra ctest arguments can be given in CTEST_ARGS (e.g. CTEST_ARGS="-R dsm\.random").
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
jobs=${JOBS:-$(nproc)}
# Debug (-O0 -g, assertions on): building the Catch2 test mains with -O2 and ASan+UBSan
# takes minutes each on two cores; at -O0 the whole build takes about two, and the tests
# (communication-bound) run no slower. DSM_SANITIZE_BUILD_TYPE=RelWithDebInfo overrides.
build_type=${DSM_SANITIZE_BUILD_TYPE:-Debug}

targets=(dsmrun dsm-top dsm_check dsm_unit_tests test_mem net_exerciser net_unit_tests
         test_balancer lb_rows csr_rows follow_lead follower_claims follow_rows reread_push moving_push take_chunks strided_pages dsm-load dsm-bench-bulk pipeline_rows gauss_seidel_seq gauss_seidel_hand
         forge_pipeline)
# The runtime's tests: tests/mem, tests/net, tests/proto, tests/job, tests/balancer, and the
# pipelined nests' (the Gauss-Seidel application, forged tile messages).
include='^(dsm\.|mem[:.]|net\.|balancer|apps\.gauss_seidel\.hand|reliability\.forged_pipeline)'
# Left out, in every sanitizer build:
#   fuzz      libFuzzer targets: built with clang++-14 apart from this build, and already
#             run with -fsanitize=fuzzer,address,undefined by the normal test run.
#   balancer: rows with a slow rank, balancer: a loaded rank leaves (the computation, the
#             pipeline): a rank that computes its rows four times, for 100 executions, or
#             hundreds of executions or sweeps beside a load: minutes at -O0 with a sanitizer. Moves under
#             the sanitizers are checked by "balancer: follows, then decides" (a move at nearly
#             every execution).
#   dsm.handoff_loaded
#             under the paper's load, and it bounds each fetch's time (a stall of the service
#             thread's idle timeout): the sanitizers' slowdown would decide it.
#   mem:running out of kernel mappings
#             exhausts vm.max_map_count on purpose; the sanitizer's allocator then cannot map
#             memory for the error path (ASan: "allocator is out of memory").
#   balancer: a sliding window keeps its memory
#             bounds the growth of resident memory, which the sanitizers' allocators (ASan's
#             quarantine of freed blocks) make grow by themselves.
exclude='fuzz|^balancer: rows with a slow rank|^balancer: a loaded rank leaves|^dsm\.handoff_loaded|^mem:running out of kernel mappings|^balancer: a sliding window'

sanitize() {
  local mode=$1 dir
  case $mode in
    address) dir=$top/build-asan ;;
    thread) dir=$top/build-tsan ;;
    *) die_setup "unknown sanitizer '$mode' (address, thread or all)" ;;
  esac
  local gen=()
  command -v ninja >/dev/null && [ ! -f "$dir/Makefile" ] && gen=(-G Ninja)
  echo "== sanitize.sh $mode: configure and build in $dir"
  cmake -S "$top" -B "$dir" "${gen[@]}" -DDSM_BUILD_PASS=OFF -DDSM_SANITIZE="$mode" \
    -DCMAKE_BUILD_TYPE="$build_type" >/dev/null || { warn "cmake failed"; return 1; }
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}" || { warn "build failed"; return 1; }

  local reports=$dir/sanitizer-reports
  rm -rf "$reports"
  mkdir -p "$reports"
  local ex=$exclude
  # The runtime detects shared-memory accesses with SIGSEGV on protected pages: the
  # sanitizers must leave SIGSEGV to it (a fault outside the region is forwarded to the
  # previous, default action, so a real crash still kills the rank with SIGSEGV).
  local common="handle_segv=0:allow_user_segv_handler=1:print_summary=1"
  if [ "$mode" = address ]; then
    # Time bounds of the tests (a crashed rank brings the job down within seconds) scaled to
    # the instrumented build's speed: ASan about 2x, TSan 5-10x when two tests share the cores.
    export DSM_TEST_TIME_SCALE=2
    export ASAN_OPTIONS="$common:detect_leaks=1:log_path=$reports/asan"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
    unset TSAN_OPTIONS DSM_REGION_BASE
  else
    # TSan keeps the application in fixed ranges of the x86-64 address space and puts its
    # shadow and meta memory in between. GCC 12's runtime (ThreadSanitizer v2): application
    # 0x0000'0000'1000-0x0080'0000'0000, 0x5500'..-0x5680'0000'0000, heap 0x7b00'..-0x7c00',
    # 0x7e80'0000'0000-0x8000'0000'0000; shadow 0x0100'..-0x2000'0000'0000, meta
    # 0x3000'..-0x4000'0000'0000. The default region base 0x4000'0000'0000 is not application
    # memory (TSan aborts: "mmap at bad address"). 0x0020'0000'0000 (128 GiB) is application
    # memory in this layout and in LLVM's newer one (0-0x0200'0000'0000), and far from the
    # executable, the libraries and the stacks.
    export DSM_REGION_BASE=0x2000000000
    export DSM_TEST_TIME_SCALE=4
    # report_signal_unsafe=0: the fault handler does the protocol's work (fetching diffs,
    # allocating) inside SIGSEGV by design. The signal is synchronous, raised only by the
    # application's own access to a protected page, never while the thread is in malloc or
    # holds a runtime lock, so TSan's async-signal-safety rule does not apply.
    export TSAN_OPTIONS="$common:report_signal_unsafe=0:halt_on_error=0:second_deadlock_stack=1:log_path=$reports/tsan"
    unset ASAN_OPTIONS UBSAN_OPTIONS
    # Measures that an idle job uses almost no CPU; TSan's own background thread and its
    # slowdown of the service thread's spin make the bound meaningless here.
    ex="$ex|^net\.idle_cpu\.shm$"
  fi

  echo "== sanitize.sh $mode: runtime tests"
  local rc=0
  # shellcheck disable=SC2086  # CTEST_ARGS holds several arguments
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$jobs" --timeout $((300 * DSM_TEST_TIME_SCALE)) -R "$include" -E "$ex" ${CTEST_ARGS:-}) || rc=1
  if compgen -G "$reports/*" >/dev/null; then
    echo "== sanitize.sh $mode: sanitizer reports (in $reports):"
    for f in "$reports"/*; do echo "--- $f"; cat "$f"; done
    rc=1
  fi
  echo "== sanitize.sh $mode: $([ $rc = 0 ] && echo pass || echo FAIL)"
  return $rc
}

mode=${1:-address}
status=0
case $mode in
  all) sanitize address || status=1; sanitize thread || status=1 ;;
  *) sanitize "$mode" || status=1 ;;
esac
exit $status
